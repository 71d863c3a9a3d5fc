-- ApplySync: drop the actions of the source's apps (no cascade on SQLite).
DELETE FROM action
WHERE workspace = :workspace
  AND app_key IN (SELECT app_key FROM app WHERE workspace = :workspace AND git_source_id = :source_id)
