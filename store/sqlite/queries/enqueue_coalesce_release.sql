-- Take the coalesce key from the waiting job that holds it with a pin
-- other than the request's (the catalog moved since it was enqueued): that
-- job keeps its pin, its input and its place and runs as it is, as a
-- claimed job does, and the key is free for a job with the new pin
-- (invariant 10: one waiting job holds a key). A holder with the request's
-- pin is left alone: the caller folds into it.
UPDATE job_queue
SET coalesce_key = NULL
WHERE workspace = :workspace
  AND app_key = :app_key
  AND action_key = :action_key
  AND coalesce_key = :coalesce_key
  AND running = 0
  AND NOT EXISTS (
      SELECT 1 FROM job j
      WHERE j.id = job_queue.job_id
        AND j.git_source_id = :git_source_id AND j.commit_sha = :commit_sha
        AND j.entrypoint = :entrypoint AND j.runtime = :runtime
        AND j.input_schema_hash IS :input_schema_hash
        AND j.output_schema_hash IS :output_schema_hash
        AND j.timeout_ms = :timeout_ms AND j.tag = :tag
        AND j.max_attempts = :max_attempts AND j.backoff_ms = :backoff_ms
        AND j.backoff_factor = :backoff_factor
        AND j.limit_memory IS :limit_memory
        AND j.limit_pids IS :limit_pids
        AND j.limit_cpu IS :limit_cpu
        AND j.env IS :env
        AND j.warm IS :warm)
