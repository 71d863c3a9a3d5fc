-- RecordSyncError: the reason the last sync failed; the catalog is untouched.
UPDATE git_source SET error = :error, error_at = :now
WHERE workspace = :workspace AND id = :id
