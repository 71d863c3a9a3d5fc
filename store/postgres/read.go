package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
)

// GetJob reads a job in any state (queries/get_job.sql);
// spine.ErrNotFound when it is not in that workspace (driver.QueueExecutor).
func (e *executor) GetJob(ctx context.Context, workspace string, id uuid.UUID) (spine.Job, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qGetJob, namedArgs{"job_id": id, "workspace": workspace})
	if err != nil {
		return spine.Job{}, translate(err)
	}
	j, err := pgx.CollectExactlyOneRow(rows, scanJob)
	if errors.Is(err, pgx.ErrNoRows) {
		return spine.Job{}, spine.ErrNotFound
	}
	if err != nil {
		return spine.Job{}, translate(err)
	}
	return j, nil
}

// scanJob reads one row of get_job.sql.
func scanJob(row pgx.CollectableRow) (spine.Job, error) {
	var (
		j                            spine.Job
		trigger                      string
		status                       *string
		input, in, out               []byte
		result, jobErr, lastErr      []byte
		timeoutMS, backoffMS         int64
		maxAttempts                  int
		factor                       float64
		scheduled, started, finished *time.Time
		limits                       limitCols
		pinned                       pinCols
		superseded                   uuid.NullUUID
	)
	err := row.Scan(&j.ID, &j.Workspace, &trigger, &j.TriggerRef, &j.CreatedBy, &j.CreatedAt, &input,
		&j.Pin.GitSourceID, &j.Pin.CommitSHA, &j.Pin.AppKey, &j.Pin.ActionKey, &j.Pin.Entrypoint, &j.Pin.Runtime,
		&in, &out, &timeoutMS, &j.Pin.Tag, &maxAttempts, &backoffMS, &factor, &j.CoalesceKey,
		&limits.memory, &limits.pids, &limits.cpu, &pinned.env, &pinned.warm,
		&status, &j.Priority, &scheduled, &started, &finished, &j.Worker,
		&j.Attempt, &j.Restarts, &j.Generation, &j.Ping,
		&result, &jobErr, &lastErr, &j.CanceledBy, &j.CanceledReason, &superseded, &j.Secrets)
	if err != nil {
		return j, err
	}
	if status != nil {
		j.Status = spine.Status(*status)
	}
	j.TriggerKind = spine.TriggerKind(trigger)
	j.SupersededBy = superseded.UUID
	j.Input, j.Result = compactJSON(input), compactJSON(result)
	j.Pin.InputSchema, j.Pin.OutputSchema = compactJSON(in), compactJSON(out)
	j.Pin.Timeout = time.Duration(timeoutMS) * time.Millisecond
	j.Pin.Retry = retryPolicy(maxAttempts, backoffMS, factor)
	j.Pin.Limits = limits.limits()
	if err := pinned.apply(&j.Pin); err != nil {
		return j, err
	}
	if scheduled != nil {
		j.ScheduledFor = *scheduled
	}
	j.StartedAt, j.CompletedAt, j.Ping = ptrTime(started), ptrTime(finished), ptrTime(j.Ping)
	if j.Error, err = spine.DecodeJobError(jobErr); err != nil {
		return j, err
	}
	j.LastError, err = spine.DecodeJobError(lastErr)
	return j, err
}

// AppendLog appends a chunk to an owned job's logs, fenced on the claim
// token (queries/append_log.sql) (driver.QueueExecutor).
func (e *executor) AppendLog(ctx context.Context, p spine.AppendLogParams) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	var seq int64
	err := e.q.QueryRow(ctx, qAppendLog, namedArgs{
		"job_id": p.JobID, "claim_token": p.ClaimToken, "data": p.Data, "now": timeArg(p.Now),
	}).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return spine.ErrNotOwner
	}
	return translate(err)
}

// Logs reads a job's chunks with Seq > afterSeq, in order
// (driver.QueueExecutor).
func (e *executor) Logs(ctx context.Context, jobID uuid.UUID, afterSeq int64) ([]spine.LogChunk, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qLogs, namedArgs{"job_id": jobID, "after_seq": afterSeq})
	if err != nil {
		return nil, translate(err)
	}
	chunks, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (spine.LogChunk, error) {
		var c spine.LogChunk
		err := row.Scan(&c.JobID, &c.Seq, &c.Data, &c.CreatedAt)
		return c, err
	})
	if err != nil {
		return nil, translate(err)
	}
	return chunks, nil
}

// Audit reads a job's audit trail, oldest first (driver.QueueExecutor).
func (e *executor) Audit(ctx context.Context, jobID uuid.UUID) ([]spine.AuditEntry, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qAudit, namedArgs{"job_id": jobID})
	if err != nil {
		return nil, translate(err)
	}
	entries, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (spine.AuditEntry, error) {
		var e spine.AuditEntry
		err := row.Scan(&e.JobID, &e.Action, &e.By, &e.Reason, &e.At)
		return e, err
	})
	if err != nil {
		return nil, translate(err)
	}
	return entries, nil
}
