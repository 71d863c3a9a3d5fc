-- ApplySync: app keys of the new commit that another source already owns.
SELECT app_key, git_source_id FROM app
WHERE workspace = @workspace AND app_key = ANY(@keys::text[]) AND git_source_id <> @source_id
ORDER BY app_key
