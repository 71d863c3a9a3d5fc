-- job_runtime is written at every claim (the first ping), every heartbeat
-- and every completion, and holds only running jobs. The index on ping
-- made each of those writes maintain a second B-tree, and kept heartbeats
-- from being HOT updates on Postgres; the reaper does not need it: it
-- starts from job_queue's running rows and reads each one's ping by key.
DROP INDEX job_runtime_ping;
