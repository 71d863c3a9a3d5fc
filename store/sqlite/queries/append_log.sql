-- Append a chunk to an owned job's logs in one statement: fenced on the
-- claim token, numbered after the job's last chunk. No row inserted means
-- the caller lost the job.
INSERT INTO job_logs (job_id, seq, data, created_at)
SELECT :id, coalesce((SELECT max(seq) FROM job_logs WHERE job_id = :id), 0) + 1, :data, :now
WHERE EXISTS (
    SELECT 1 FROM job_queue
    WHERE job_id = :id AND claim_token = :token AND running = 1)
