-- JobEvents inserts an event of @type for each job of @ids (a JSON array),
-- in that order, with its state as the job_event view shows it after this
-- transaction's writes (migration 0020: the data is built when read, by
-- event_view; data holds '{}'). An empty @type is each job's finished
-- event, by the status it finished with. The event time is @now, or when
-- NULL the time of the change the job's state shows: its completion, its
-- start (a claim) or its creation (an enqueue).
INSERT INTO event_outbox (id, workspace, type, subject, time, data, job_id, job_status, job_priority,
                          job_scheduled_for, job_started_at, job_completed_at, job_worker, job_attempt,
                          job_restarts, job_generation, job_result, job_error, job_last_error,
                          job_canceled_by, job_canceled_reason, job_secrets, job_superseded_by)
SELECT windforce_event_id(t.at), t.workspace, t.type, t.id, t.at, '{}', t.id, t.status, t.priority,
       t.scheduled_for, t.started_at, t.completed_at, t.worker, t.attempt,
       t.restarts, t.generation, t.result, t.error, t.last_error,
       t.canceled_by, t.canceled_reason, t.secrets, t.superseded_by
FROM (
    SELECT v.*, k.key,
           CASE WHEN @type <> '' THEN @type
                WHEN v.status = 'success' THEN 'job.succeeded'
                WHEN v.status = 'failure' THEN 'job.failed'
                ELSE 'job.canceled' END AS type,
           coalesce(@now, CASE WHEN v.completed_at IS NOT NULL THEN v.completed_at
                               WHEN v.status = 'running' THEN v.started_at
                               ELSE v.created_at END) AS at
    FROM json_each(@ids) AS k
    JOIN job_event AS v ON v.id = k.value
) AS t
WHERE EXISTS (SELECT 1 FROM event_sink s WHERE s.workspace = t.workspace) -- recorded while the workspace has a sink
ORDER BY t.key
