-- JobEvents writes an event of @type for each job of @ids (a JSON array)
-- of @workspace, in that order, with its state as the job_event view shows
-- it after this transaction's writes, as ONE outbox row (migration 0021:
-- its jobs column holds every event's state, written by the driver's
-- windforce_job_events; event_view builds each event's data when read).
-- Nothing is written while @workspace has no sink (one probe). An empty @type is each job's finished event, by the
-- status it finished with. The event time is @now, or when NULL the time
-- of the change the job's state shows: its completion, its start (a
-- claim) or its creation (an enqueue).
--
-- A row of n events takes the n seqs after the last one handed out
-- (sqlite_sequence: AUTOINCREMENT never reuses a seq) and stores the last
-- as its seq, which moves sqlite_sequence past them. The row's id, type,
-- subject and time are its first event's (with one min() aggregate the
-- bare columns come from the row of the minimum, a documented SQLite
-- rule).
INSERT INTO event_outbox (seq, n, id, workspace, type, subject, time, data, jobs)
SELECT coalesce((SELECT s.seq FROM sqlite_sequence AS s WHERE s.name = 'event_outbox'), 0) + b.n,
       b.n, windforce_event_id(b.at), @workspace, b.type, b.id, b.at, '{}', b.jobs
FROM (
    SELECT count(*) AS n, min(t.key) AS first, t.type, t.id, t.at,
           windforce_job_events(t.key, t.id, t.type, t.at, t.status, t.priority, t.scheduled_for,
                                t.started_at, t.completed_at, t.worker, t.attempt, t.restarts,
                                t.generation, t.result, t.error, t.last_error, t.canceled_by,
                                t.canceled_reason, coalesce(t.secrets, '[]'), t.superseded_by) AS jobs
    FROM (
        SELECT v.*, k.key,
               CASE WHEN @type <> '' THEN @type
                    WHEN v.status = 'success' THEN 'job.succeeded'
                    WHEN v.status = 'failure' THEN 'job.failed'
                    ELSE 'job.canceled' END AS type,
               coalesce(@now, CASE WHEN v.completed_at IS NOT NULL THEN v.completed_at
                                   WHEN v.status = 'running' THEN v.started_at
                                   ELSE v.created_at END) AS at
        -- recorded while the workspace has a sink: the probe is evaluated
        -- once, before the loop (as a WHERE term SQLite would make it a
        -- join, once per job); each job one primary-key lookup, in order
        -- (CROSS JOIN), never a walk of the workspace's jobs (+).
        FROM json_each(CASE WHEN EXISTS (SELECT 1 FROM event_sink s WHERE s.workspace = @workspace)
                            THEN @ids ELSE '[]' END) AS k
        CROSS JOIN job_event AS v
        WHERE v.id = k.value AND +v.workspace = @workspace
    ) AS t
) AS b
WHERE b.n > 0
