-- ReapRequeue puts dead workers' jobs back to waiting with restarts+1, the
-- attempt not charged (invariant 4). The WHERE repeats the whole guard —
-- running, the claim token read by reap_lock.sql, no cancel mark, under the
-- restart limit, ping still stale — so a job that completed, heartbeated or
-- was claimed again meanwhile is left alone (river#1302). Each distinct tag
-- is woken once.
WITH stale AS (
    SELECT * FROM unnest(@job_ids::uuid[], @claim_tokens::uuid[], @errors::text[])
        AS s(job_id, claim_token, error)
), clock AS (
    SELECT coalesce(@now::timestamptz, now()) AS now
), requeued AS (
    UPDATE job_queue q
    SET running = false, worker = NULL, claim_token = NULL, started_at = NULL,
        restarts = q.restarts + 1, last_error = s.error::jsonb, scheduled_for = clock.now
    FROM stale s, clock
    WHERE q.job_id = s.job_id AND q.claim_token = s.claim_token AND q.running
      AND q.canceled_by IS NULL AND q.restarts + 1 <= @restart_limit::integer
      AND NOT EXISTS (
          SELECT 1 FROM job_runtime r
          WHERE r.job_id = q.job_id
            AND r.ping >= clock.now - @zombie_timeout_ms::bigint * interval '1 millisecond')
    RETURNING q.job_id, q.tag
), runtime_gone AS (
    DELETE FROM job_runtime r USING requeued q WHERE r.job_id = q.job_id
)
SELECT job_id
FROM requeued
-- Always true; it notifies each distinct tag once.
WHERE (SELECT count(pg_notify(@channel::text, tag)) FROM (SELECT DISTINCT tag FROM requeued) AS t) >= 0
