-- EnqueueCoalesceRelease takes the coalesce key from the waiting job that
-- holds it with a pin other than the request's (the catalog moved since it
-- was enqueued): that job keeps its pin, its input and its place and runs
-- as it is, as a claimed job does, and the key is free for a job with the
-- new pin (invariant 10: one waiting job holds a key). A holder with the
-- request's pin (another enqueue inserted it meanwhile) is left alone: the
-- caller folds into it.
UPDATE job_queue q
SET coalesce_key = NULL
FROM job j
WHERE q.workspace = @workspace AND q.app_key = @app_key AND q.action_key = @action_key
  AND q.coalesce_key = @coalesce_key AND NOT q.running
  AND j.id = q.job_id
  AND NOT (j.git_source_id = @git_source_id AND j.commit_sha = @commit_sha
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
      AND j.warm IS NOT DISTINCT FROM @warm::text)
