-- ReapFinish finishes dead workers' jobs that must not run again: a
-- cancel-marked job completes canceled (started_at kept), a job past the
-- restart limit completes as failure with @errors' reason (invariant 4).
-- Like reap_requeue.sql, the DELETE repeats the whole guard. notified
-- wakes the finished jobs' waiters on @done_channel as complete_batch.sql
-- does: one notification per 200 job ids, delivered on commit.
WITH stale AS (
    SELECT * FROM unnest(@job_ids::uuid[], @claim_tokens::uuid[], @errors::text[])
        AS s(job_id, claim_token, error)
), clock AS (
    SELECT coalesce(@now::timestamptz, now()) AS now
), finished AS (
    DELETE FROM job_queue q
    USING stale s, clock
    WHERE q.job_id = s.job_id AND q.claim_token = s.claim_token AND q.running
      AND (q.canceled_by IS NOT NULL OR q.restarts + 1 > @restart_limit::integer)
      AND NOT EXISTS (
          SELECT 1 FROM job_runtime r
          WHERE r.job_id = q.job_id
            AND r.ping >= clock.now - @zombie_timeout_ms::bigint * interval '1 millisecond')
    RETURNING q.job_id, q.workspace, q.tag, q.started_at, q.worker, q.attempt, q.restarts,
              q.canceled_by, q.canceled_reason, s.error
), recorded AS (
    INSERT INTO job_completed (job_id, workspace, tag, status, error, started_at, completed_at,
                               duration_ms, worker, attempt, restarts, canceled_by, canceled_reason)
    SELECT f.job_id, f.workspace, f.tag,
           CASE WHEN f.canceled_by IS NOT NULL THEN 'canceled' ELSE 'failure' END,
           CASE WHEN f.canceled_by IS NOT NULL THEN NULL ELSE f.error::jsonb END,
           f.started_at, clock.now,
           greatest(0, floor(extract(epoch FROM clock.now - f.started_at) * 1000))::bigint,
           f.worker, f.attempt, f.restarts, f.canceled_by, f.canceled_reason
    FROM finished f, clock
    RETURNING job_id, status
), runtime_gone AS (
    DELETE FROM job_runtime r USING finished f WHERE r.job_id = f.job_id
), notified AS (
    SELECT count(pg_notify(@done_channel::text, ids)) AS n
    FROM (
        SELECT string_agg(job_id::text, ',') AS ids
        FROM (SELECT job_id, (row_number() OVER () - 1) / 200 AS chunk FROM recorded) AS numbered
        GROUP BY chunk
    ) AS chunks
)
SELECT job_id, status FROM recorded, notified
