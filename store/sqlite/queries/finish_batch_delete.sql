-- Remove the queue rows of the jobs finish_batch recorded (:ids, a JSON
-- array), in the same transaction; each is one primary-key lookup. The
-- claim token tells which lease of the batch each row was under (a batch
-- may name one job under a stale or forged token beside its own).
DELETE FROM job_queue WHERE job_id IN (SELECT value FROM json_each(:ids))
RETURNING job_id, claim_token
