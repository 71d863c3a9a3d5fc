-- Fold a request into the waiting job with the same coalesce key and the
-- same pin, if there is one (invariant 10). Only waiting rows carry
-- job_queue.coalesce_key: the claim clears it, so a running job is never
-- folded into. A waiting job pinned to other code, schemas or settings
-- (the catalog moved since it was enqueued) is not folded into either: its
-- code was never validated for this input (enqueue_coalesce_release.sql
-- hands the key on). IS compares the nullable columns, NULL equal to NULL.
UPDATE job_queue
SET generation = generation + 1
WHERE workspace = :workspace
  AND app_key = :app_key
  AND action_key = :action_key
  AND coalesce_key = :coalesce_key
  AND running = 0
  AND EXISTS (
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
RETURNING job_id, generation
