-- AppendLog appends a chunk to an owned job's logs, fenced on the claim
-- token. The queue row lock (FOR NO KEY UPDATE: it does not block a
-- heartbeat) serializes appends of one job, so seq = max + 1 is free of
-- races; first seq is 1.
WITH owner AS (
    SELECT job_id FROM job_queue
    WHERE job_id = @job_id AND claim_token = @claim_token AND running
    FOR NO KEY UPDATE
)
INSERT INTO job_logs (job_id, seq, data, created_at)
SELECT o.job_id,
       coalesce((SELECT max(seq) FROM job_logs l WHERE l.job_id = o.job_id), 0) + 1,
       @data::text, coalesce(@now::timestamptz, now())
FROM owner o
RETURNING seq
