-- A job's log chunks after :after_seq, in order.
SELECT seq, data, created_at
FROM job_logs
WHERE job_id = :id AND seq > :after_seq
ORDER BY seq
