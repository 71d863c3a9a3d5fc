-- ApplySync: drop the source's apps (their actions cascade); the new
-- commit's are inserted in the same transaction, so readers see the old
-- set or the new one, never a mix.
DELETE FROM app WHERE workspace = @workspace AND git_source_id = @source_id
