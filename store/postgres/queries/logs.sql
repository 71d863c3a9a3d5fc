-- Logs reads a job's chunks after @after_seq, in order.
SELECT job_id, seq, data, created_at
FROM job_logs
WHERE job_id = @job_id AND seq > @after_seq
ORDER BY seq
