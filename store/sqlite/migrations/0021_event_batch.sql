-- One outbox row per statement, not one per job event (issue 17): a
-- statement that writes events for many jobs (an enqueue batch, a claim,
-- a batch completion) writes one row per workspace holding them all, so
-- the row, its id and its two index entries are paid once per batch
-- instead of once per job. The batch paths write the row's jobs from Go
-- (store/sqlite/events_batch.go), from what their own statements wrote:
-- building each event with SQLite's JSON functions, and reading it back
-- through job_event, was most of the events' cost on the one writer
-- (bench/compare --cpuprofile; docs/BENCHMARKS.md).
--
-- A row holds n events (NULL: 1) with the seqs seq - n + 1 .. seq: its
-- seq is its last event's and the writer reserves the range below it
-- (events_jobs.sql), so seq order is still commit order and a cursor is
-- still an event's seq. jobs is the events of a job row (NULL for a
-- source event, or a job event written before migration 0020: data holds
-- those), a JSON array of one array per event, in seq order:
--
--   [0 job id, 1 type, 2 time, 3 status, 4 priority, 5 scheduled_for,
--    6 started_at, 7 completed_at, 8 worker, 9 attempt, 10 restarts,
--    11 generation, 12 result, 13 error, 14 last_error, 15 canceled_by,
--    16 canceled_reason, 17 secrets, 18 superseded_by]
--
-- (migration 0020's job_* columns; result, error, last_error and secrets
-- as JSON values, secrets [] when the job has none; scheduled_for,
-- started_at and completed_at in microseconds from the event's time, and
-- the fields after generation left off from the end while they hold
-- their default, null, "" or []: a batch's rows are bytes its commit
-- writes). The row's id, type, subject and time are its first event's;
-- the k-th event's id is the row's with k added to its random low 62
-- bits (the driver's nthEventID), so no id is generated or indexed per
-- event and each stays the same on every read.
ALTER TABLE event_outbox ADD COLUMN n INTEGER CHECK (n >= 1);
ALTER TABLE event_outbox ADD COLUMN jobs TEXT;

-- Migration 0020's job events become one-event rows of the new form, so
-- the readers know two kinds of row only.
UPDATE event_outbox
SET n = 1,
    jobs = json_array(json_array(job_id, type, time, job_status, job_priority, job_scheduled_for - time,
                                 job_started_at - time, job_completed_at - time, job_worker, job_attempt, job_restarts,
                                 job_generation, json(job_result), json(job_error), json(job_last_error),
                                 job_canceled_by, job_canceled_reason, json(coalesce(job_secrets, '[]')),
                                 job_superseded_by)),
    job_id = NULL, job_status = NULL, job_priority = NULL, job_scheduled_for = NULL, job_started_at = NULL,
    job_completed_at = NULL, job_worker = NULL, job_attempt = NULL, job_restarts = NULL, job_generation = NULL,
    job_result = NULL, job_error = NULL, job_last_error = NULL, job_canceled_by = NULL,
    job_canceled_reason = NULL, job_secrets = NULL, job_superseded_by = NULL
WHERE job_id IS NOT NULL;

-- event_view is every event, one line per event: a job row's events
-- expanded from jobs (nth is the event's place in its row, row_seq the
-- row's seq: readers bound row_seq, the primary key, and order by row_seq,
-- nth), each job event's data built from its state and its job row in the
-- API shape (server.JobView, GET /api/w/{ws}/jobs/{id}) without its input,
-- the other rows' data as stored. The times and the timeout are written by
-- the driver's windforce_time and windforce_duration
-- (store/sqlite/events.go) as Go writes them.
DROP VIEW event_view;
CREATE VIEW event_view AS
SELECT o.seq AS row_seq, coalesce(e.key, 0) AS nth,
       o.seq - coalesce(o.n, 1) + 1 + coalesce(e.key, 0) AS seq,
       o.id, o.workspace, coalesce(e.value ->> 1, o.type) AS type,
       coalesce(e.value ->> 0, o.subject) AS subject, coalesce(e.value ->> 2, o.time) AS time,
       CASE WHEN o.jobs IS NULL THEN o.data ELSE json_patch(json_object(
           'id', e.value ->> 0, 'workspace', o.workspace, 'status', e.value ->> 3,
           'app', j.app_key, 'action', j.action_key, 'commit_sha', j.commit_sha,
           'git_source_id', j.git_source_id, 'entrypoint', j.entrypoint, 'runtime', j.runtime,
           'tag', j.tag, 'priority', e.value ->> 4, 'trigger_kind', j.trigger_kind,
           'trigger_ref', j.trigger_ref, 'created_by', j.created_by,
           'attempt', e.value ->> 9, 'restarts', e.value ->> 10, 'worker', e.value ->> 8,
           'coalesce_key', coalesce(j.coalesce_key, ''), 'timeout', windforce_duration(j.timeout_ms),
           'created_at', windforce_time(j.created_at),
           'scheduled_for', windforce_time((e.value ->> 2) + (e.value ->> 5)),
           'started_at', windforce_time((e.value ->> 2) + (e.value ->> 6)),
           'completed_at', windforce_time((e.value ->> 2) + (e.value ->> 7)),
           'result', e.value -> 12, 'error', e.value -> 13, 'last_error', e.value -> 14,
           'canceled_by', coalesce(e.value ->> 15, ''), 'canceled_reason', coalesce(e.value ->> 16, ''),
           'generation', e.value ->> 11, 'secrets', coalesce(e.value -> 17, json('[]')),
           'superseded_by', e.value ->> 18),
         -- limits, env and warm are left out when the pin sets none
         -- (omitempty): a merge patch drops its null members.
         json_object(
           'limits', CASE WHEN coalesce(j.limit_memory, j.limit_pids, j.limit_cpu) IS NOT NULL THEN
               json_patch('{}', json_object('memory', j.limit_memory, 'pids', j.limit_pids, 'cpu', j.limit_cpu)) END,
           -- json(): a subquery's value loses its JSON subtype.
           'env', CASE WHEN json_array_length(j.env) > 0 THEN json((SELECT json_group_object(json_extract(v.value, '$.name'),
                              json(CASE WHEN coalesce(json_extract(v.value, '$.secret'), '') <> ''
                                      THEN json_object('secret', json_extract(v.value, '$.secret'))
                                      ELSE json_quote(coalesce(json_extract(v.value, '$.value'), '')) END))
                   FROM json_each(j.env) AS v)) END,
           'warm', CASE WHEN j.warm IS NOT NULL THEN
               json_object('max_jobs', json_extract(j.warm, '$.max_jobs'),
                           'idle', windforce_duration(json_extract(j.warm, '$.idle_ms'))) END)) END AS data
FROM event_outbox AS o
LEFT JOIN json_each(o.jobs) AS e
LEFT JOIN job AS j ON j.id = e.value ->> 0;
