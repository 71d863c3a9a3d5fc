-- JobSetSecrets records the secrets (a JSON array of "name@version") an
-- owned job received at claim, fenced on the claim token: a worker that
-- lost the job changes nothing, and no row updated says so.
UPDATE job SET secrets = :secrets
WHERE id = :id
  AND EXISTS (SELECT 1 FROM job_queue
              WHERE job_id = :id AND claim_token = :token AND running = 1)
