-- ApplySync: app keys of the new commit that another source already owns.
SELECT app_key, git_source_id FROM app
WHERE workspace = :workspace AND git_source_id <> :source_id
  AND app_key IN (SELECT value FROM json_each(:keys))
ORDER BY app_key
