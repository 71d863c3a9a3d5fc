-- EnqueueCoalesce folds a request into the waiting job that holds the same
-- (workspace, app, action, coalesce key) and has the same pin: the latest
-- input wins and the generation counts the requests (invariant 10).
-- job_queue.coalesce_key is set only while the job waits (the claim
-- clears it), and the UPDATE locks the row and re-checks it, so a job
-- claimed meanwhile is not touched and the caller inserts a follow-up
-- instead. A waiting job pinned to other code, schemas or settings (the
-- catalog moved since it was enqueued) is not folded into either: its
-- code was never validated for this input (enqueue_coalesce_release.sql
-- hands the key on). The pin's columns never change, so comparing them
-- needs no lock on job.
WITH waiting AS (
    UPDATE job_queue q
    SET generation = q.generation + 1
    FROM job j
    WHERE q.workspace = @workspace AND q.app_key = @app_key AND q.action_key = @action_key
      AND q.coalesce_key = @coalesce_key AND NOT q.running
      AND j.id = q.job_id
      AND j.git_source_id = @git_source_id AND j.commit_sha = @commit_sha
      AND j.entrypoint = @entrypoint AND j.runtime = @runtime
      AND j.input_schema_hash IS NOT DISTINCT FROM @input_schema_hash::text
      AND j.output_schema_hash IS NOT DISTINCT FROM @output_schema_hash::text
      AND j.timeout_ms = @timeout_ms AND j.tag = @tag
      AND j.max_attempts = @max_attempts AND j.backoff_ms = @backoff_ms
      AND j.backoff_factor = @backoff_factor
      AND j.limit_memory IS NOT DISTINCT FROM @limit_memory::bigint
      AND j.limit_pids IS NOT DISTINCT FROM @limit_pids::integer
      AND j.limit_cpu IS NOT DISTINCT FROM @limit_cpu::double precision
      AND j.env IS NOT DISTINCT FROM @env::text
      AND j.warm IS NOT DISTINCT FROM @warm::text
    RETURNING q.job_id, q.tag, q.generation
), replaced AS (
    UPDATE job
    SET input = @input::jsonb, generation = waiting.generation
    FROM waiting
    WHERE job.id = waiting.job_id
)
SELECT job_id, generation
FROM waiting
WHERE (CASE WHEN @notify::boolean THEN pg_notify(@channel::text, tag)::text ELSE '' END) = ''
