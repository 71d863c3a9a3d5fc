-- ReadDispatched reads a job dispatched at enqueue (enqueue.sql) to
-- @worker under @claim_token, with the columns claim.sql returns, while
-- it is still that worker's running job. It writes nothing: the enqueue
-- wrote the ownership and the first ping. Its columns are claim.sql's
-- last SELECT's, in that order (scanClaimed reads both): change them
-- together.
SELECT q.job_id, j.workspace, j.trigger_kind, j.trigger_ref, j.created_by, j.created_at, j.input,
       j.git_source_id, j.commit_sha, j.app_key, j.action_key, j.entrypoint, j.runtime,
       si.body, so.body, j.timeout_ms, j.tag,
       j.max_attempts, j.backoff_ms, j.backoff_factor,
       j.limit_memory, j.limit_pids, j.limit_cpu, j.env, j.warm,
       q.priority, q.claim_token, q.attempt, q.restarts, q.started_at, q.generation
FROM job_queue q
JOIN job j ON j.id = q.job_id
LEFT JOIN job_schema si ON si.hash = j.input_schema_hash
LEFT JOIN job_schema so ON so.hash = j.output_schema_hash
WHERE q.job_id = @job_id AND q.claim_token = @claim_token AND q.running AND q.worker = @worker
