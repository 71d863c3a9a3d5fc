-- JobSetSecrets records the secrets ("name@version") an owned job received
-- at claim, fenced on the claim token: a worker that lost the job (reaped,
-- reclaimed elsewhere) changes nothing, and no row updated says so.
UPDATE job SET secrets = @secrets::text[]
WHERE id = @job_id
  AND EXISTS (SELECT 1 FROM job_queue q
              WHERE q.job_id = @job_id AND q.claim_token = @claim_token AND q.running)
