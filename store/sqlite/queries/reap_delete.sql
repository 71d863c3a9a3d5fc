-- Remove the queue rows of the jobs reap_finish recorded, behind the same
-- guard. :leases is a JSON array of [job_id, claim_token] pairs.
DELETE FROM job_queue
WHERE job_id IN (SELECT l.value ->> 0 FROM json_each(:leases) AS l)
  AND claim_token = (SELECT l.value ->> 1 FROM json_each(:leases) AS l WHERE l.value ->> 0 = job_queue.job_id)
  AND running = 1
  AND NOT EXISTS (SELECT 1 FROM job_runtime AS r WHERE r.job_id = job_queue.job_id AND r.ping >= :cutoff)
