-- The first ping of freshly claimed jobs, in the claim's transaction, so a
-- worker that dies before its first heartbeat is still reaped.
INSERT INTO job_runtime (job_id, ping)
SELECT value, :now FROM json_each(:ids) WHERE true
ON CONFLICT (job_id) DO UPDATE SET ping = excluded.ping
