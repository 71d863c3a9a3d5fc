-- ApplySync: drop the source's apps; the new commit's are inserted in the
-- same transaction, so readers see the old set or the new one.
DELETE FROM app WHERE workspace = :workspace AND git_source_id = :source_id
