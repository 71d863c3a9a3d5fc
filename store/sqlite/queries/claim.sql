-- Claim up to :limit waiting jobs on the tags in :tags (a JSON array of
-- distinct strings), best first (invariant 2). One statement on the one
-- writer connection, so no two callers can take the same row.
--
-- The inner, correlated selection walks the claim index of one tag in its
-- order and stops after :limit rows, so the outer sort sees at most
-- tags × :limit rows however deep the queue is. "running = 0" must be
-- written literally for SQLite to use the partial claim index. INDEXED BY
-- pins that plan: it does not depend on statistics (an ANALYZE taken while
-- the queue was small or had one tag cannot turn it into a scan), and if
-- the index could not serve the query SQLite would refuse to prepare it
-- rather than silently scan.
--
-- Each row gets its own random version-4 UUID as claim token: randomblob
-- and random are evaluated per row. The rest of RETURNING is each job's
-- job.started event (events_batch.go), recorded while its workspace has a
-- sink (one probe).
UPDATE job_queue
SET running = 1,
    started_at = :now,
    worker = :worker,
    coalesce_key = NULL,
    claim_token = lower(
        hex(randomblob(4)) || '-' ||
        hex(randomblob(2)) || '-4' ||
        substr(hex(randomblob(2)), 2) || '-' ||
        substr('89AB', 1 + (random() & 3), 1) || substr(hex(randomblob(2)), 2) || '-' ||
        hex(randomblob(6)))
WHERE job_id IN (
    SELECT q.job_id
    FROM json_each(:tags) AS t, job_queue AS q
    WHERE q.job_id IN (
        SELECT c.job_id
        FROM job_queue AS c INDEXED BY job_queue_claim
        WHERE c.tag = t.value
          AND c.running = 0
          AND c.scheduled_for <= :now
        ORDER BY c.priority DESC, c.scheduled_for, c.job_id
        LIMIT :limit)
    ORDER BY q.priority DESC, q.scheduled_for, q.job_id
    LIMIT :limit)
RETURNING job_id, workspace, priority, scheduled_for, attempt, restarts, generation, claim_token, started_at,
          worker, last_error, coalesce(canceled_by, ''), coalesce(canceled_reason, ''),
          EXISTS (SELECT 1 FROM event_sink s WHERE s.workspace = job_queue.workspace)
