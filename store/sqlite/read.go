package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// GetJob reads a job in any state in one statement (queries/get_job.sql,
// one snapshot), on the reader pool; spine.ErrNotFound when it is not in
// that workspace (driver.QueueExecutor).
func (e *executor) GetJob(ctx context.Context, workspace string, id uuid.UUID) (spine.Job, error) {
	rows, err := e.read(ctx, qGetJob, sql.Named("id", id), sql.Named("workspace", workspace))
	if err != nil {
		return spine.Job{}, err
	}
	jobs, err := collect(rows, scanJob)
	if err != nil {
		return spine.Job{}, err
	}
	if len(jobs) == 0 {
		return spine.Job{}, spine.ErrNotFound
	}
	return jobs[0], nil
}

// scanJob reads one get_job row.
func scanJob(rows *sql.Rows) (spine.Job, error) {
	var (
		j                                  spine.Job
		createdAt, timeoutMS, backoffMS    int64
		input                              string
		inSchema, outSchema, coalesceKey   sql.NullString
		status, worker                     sql.NullString
		scheduledFor, startedAt, completed sql.NullInt64
		attempt, restarts, generation      sql.NullInt64
		ping                               sql.NullInt64
		result, errText, lastErr           sql.NullString
		canceledBy, canceledWhy            sql.NullString
		limits                             limitCols
		pinned                             pinCols
		superseded                         uuid.NullUUID
		received                           sql.NullString
	)
	err := rows.Scan(&j.ID, &j.Workspace, &j.TriggerKind, &j.TriggerRef, &j.CreatedBy, &createdAt, &input,
		&j.Pin.GitSourceID, &j.Pin.CommitSHA, &j.Pin.AppKey, &j.Pin.ActionKey, &j.Pin.Entrypoint, &j.Pin.Runtime,
		&inSchema, &outSchema, &timeoutMS, &j.Pin.Tag,
		&j.Pin.Retry.MaxAttempts, &backoffMS, &j.Pin.Retry.Factor, &coalesceKey,
		&limits.memory, &limits.pids, &limits.cpu, &pinned.env, &pinned.warm,
		&j.Priority, &status, &scheduledFor, &startedAt, &completed, &worker,
		&attempt, &restarts, &generation, &ping,
		&result, &errText, &lastErr, &canceledBy, &canceledWhy, &superseded, &received)
	if err != nil {
		return j, err
	}
	if j.Secrets, err = decodeJobSecrets(received); err != nil {
		return j, err
	}
	j.CreatedAt = fromMicros(createdAt)
	j.Input = []byte(input)
	j.Pin.InputSchema, j.Pin.OutputSchema = nullJSON(inSchema), nullJSON(outSchema)
	j.Pin.Timeout = time.Duration(timeoutMS) * time.Millisecond
	j.Pin.Retry.Backoff = time.Duration(backoffMS) * time.Millisecond
	j.Pin.Limits = limits.limits()
	if err := pinned.apply(&j.Pin); err != nil {
		return j, err
	}
	j.CoalesceKey = coalesceKey.String
	j.SupersededBy = superseded.UUID
	j.Status = spine.Status(status.String)
	j.ScheduledFor = timeOrZero(scheduledFor)
	j.StartedAt, j.CompletedAt, j.Ping = nullTime(startedAt), nullTime(completed), nullTime(ping)
	j.Worker = worker.String
	j.Attempt, j.Restarts, j.Generation = int(attempt.Int64), int(restarts.Int64), generation.Int64
	j.Result = nullJSON(result)
	if j.Error, err = decodeNullError(errText); err != nil {
		return j, err
	}
	if j.LastError, err = decodeNullError(lastErr); err != nil {
		return j, err
	}
	j.CanceledBy, j.CanceledReason = canceledBy.String, canceledWhy.String
	return j, nil
}

// AppendLog appends a chunk to an owned job's logs in one fenced
// statement (queries/append_log.sql); on the pool one autocommit statement
// on the writer (driver.QueueExecutor).
func (e *executor) AppendLog(ctx context.Context, p spine.AppendLogParams) error {
	res, err := e.writerExec(ctx, qAppendLog,
		sql.Named("id", p.JobID), sql.Named("token", p.ClaimToken),
		sql.Named("data", p.Data), sql.Named("now", micros(resolveNow(p.Now))))
	if err != nil {
		return translate(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return spine.ErrNotOwner
	}
	return nil
}

// Logs reads a job's chunks with Seq > afterSeq, in order, on the reader
// pool (driver.QueueExecutor).
func (e *executor) Logs(ctx context.Context, jobID uuid.UUID, afterSeq int64) ([]spine.LogChunk, error) {
	rows, err := e.read(ctx, qLogs, sql.Named("id", jobID), sql.Named("after_seq", afterSeq))
	if err != nil {
		return nil, err
	}
	return collect(rows, func(rows *sql.Rows) (spine.LogChunk, error) {
		c := spine.LogChunk{JobID: jobID}
		var at int64
		err := rows.Scan(&c.Seq, &c.Data, &at)
		c.CreatedAt = fromMicros(at)
		return c, err
	})
}

// Audit reads a job's audit trail, oldest first, on the reader pool
// (driver.QueueExecutor).
func (e *executor) Audit(ctx context.Context, jobID uuid.UUID) ([]spine.AuditEntry, error) {
	rows, err := e.read(ctx, qAudit, sql.Named("id", jobID))
	if err != nil {
		return nil, err
	}
	return collect(rows, func(rows *sql.Rows) (spine.AuditEntry, error) {
		e := spine.AuditEntry{JobID: jobID}
		var at int64
		err := rows.Scan(&e.Action, &e.By, &e.Reason, &at)
		e.At = fromMicros(at)
		return e, err
	})
}
