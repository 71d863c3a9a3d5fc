-- What of the job rows of @ids (a JSON array) their finished events hold,
-- as the job_event view reads it once the queue row is gone (migration
-- 0020): priority, generation, secrets and the follow-up that superseded
-- the job; one primary-key lookup each (complete_batch.go), by place in
-- @ids.
SELECT k.key, j.priority, j.generation, j.secrets,
       CASE WHEN j.coalesce_key IS NOT NULL THEN
           (SELECT n.id FROM job AS n
            WHERE n.coalesce_key = j.coalesce_key
              AND n.workspace = j.workspace AND n.app_key = j.app_key AND n.action_key = j.action_key
              AND (n.created_at, n.id) > (j.created_at, j.id)
            ORDER BY n.created_at DESC, n.id DESC LIMIT 1) END
FROM json_each(@ids) AS k
JOIN job AS j ON j.id = k.value
