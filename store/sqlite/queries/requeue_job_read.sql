-- RequeueJobRead reads, in the requeue's write transaction, what a requeue
-- enqueues again: the live job's trigger, creator, input, app and action,
-- and the queue row's priority, schedule and coalesce key. No row: the job
-- is finished, unknown, or in another workspace.
SELECT q.running, j.trigger_kind, j.trigger_ref, j.created_by, j.input, j.app_key, j.action_key,
       q.priority, q.scheduled_for, coalesce(q.coalesce_key, '')
FROM job_queue AS q
JOIN job AS j ON j.id = q.job_id
WHERE q.job_id = :id AND q.workspace = :workspace
