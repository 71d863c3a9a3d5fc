package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/spine"
)

// Claim takes up to p.Limit waiting jobs on p.Tags (invariant 2) on the
// one writer, in one transaction of its own on the pool: the UPDATE …
// RETURNING that picks and marks the rows (queries/claim.sql, each with its
// own random claim token), the first ping (claim_ping.sql), and the read of
// their pins (claim_jobs.sql) (driver.QueueExecutor). Its commit is not
// synced (Driver.writeUnsynced): only this process's worker learns of the
// claim, and the job's synced outcome makes it durable.
func (e *executor) Claim(ctx context.Context, p spine.ClaimParams) ([]spine.ClaimedJob, error) {
	tagsArg, err := stringsJSON(p.Tags)
	if err != nil {
		return nil, err
	}
	now := micros(resolveNow(p.Now))
	var jobs []spine.ClaimedJob
	err = e.writeUnsynced(ctx, func(w *writeTx) error {
		var werr error
		jobs, werr = w.claim(ctx, p.Worker, tagsArg, p.Limit, now)
		return werr
	})
	return jobs, err
}

// claimed is what the claim's RETURNING gives for one job, with its
// job.started event (filled by fillPins) and whether it is recorded.
type claimed struct {
	job          spine.ClaimedJob
	scheduledFor int64
	event        jobEventState
	recorded     bool
}

func (w *writeTx) claim(ctx context.Context, worker, tags string, limit int, now int64) ([]spine.ClaimedJob, error) {
	rows, err := w.query(ctx, qClaim,
		sql.Named("tags", tags), sql.Named("limit", limit),
		sql.Named("now", now), sql.Named("worker", worker))
	if err != nil {
		return nil, fmt.Errorf("mark claimed: %w", err)
	}
	cs, err := collect(rows, func(rows *sql.Rows) (claimed, error) {
		var c claimed
		var startedAt int64
		ev := &c.event
		err := rows.Scan(&c.job.ID, &c.job.Workspace, &c.job.Priority, &c.scheduledFor,
			&c.job.Attempt, &c.job.Restarts, &c.job.Generation, &c.job.ClaimToken, &startedAt,
			&ev.worker, &ev.lastError, &ev.canceledBy, &ev.canceledReason, &c.recorded)
		c.job.StartedAt = fromMicros(startedAt)
		ev.id, ev.typ, ev.at, ev.status = c.job.ID, string(events.JobStarted), now, string(spine.StatusRunning)
		ev.priority, ev.scheduledFor = int64(c.job.Priority), sql.NullInt64{Int64: c.scheduledFor, Valid: true}
		ev.startedAt = sql.NullInt64{Int64: startedAt, Valid: true}
		ev.attempt, ev.restarts, ev.generation = int64(c.job.Attempt), int64(c.job.Restarts), int64(c.job.Generation)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("mark claimed: %w", err)
	}
	if len(cs) == 0 {
		return nil, nil
	}
	ids := make([]uuid.UUID, len(cs))
	for i, c := range cs {
		ids[i] = c.job.ID
	}
	idsArg := idsJSON(ids)
	if _, err := w.exec(ctx, qClaimPing, sql.Named("ids", idsArg), sql.Named("now", now)); err != nil {
		return nil, fmt.Errorf("first ping: %w", err)
	}
	if err := w.fillPins(ctx, idsArg, cs); err != nil {
		return nil, err
	}
	// RETURNING has no order: give the jobs best first, as the claim chose.
	slices.SortFunc(cs, func(a, b claimed) int {
		if c := cmp.Compare(b.job.Priority, a.job.Priority); c != 0 {
			return c
		}
		if c := cmp.Compare(a.scheduledFor, b.scheduledFor); c != 0 {
			return c
		}
		return strings.Compare(a.job.ID.String(), b.job.ID.String())
	})
	jobs := make([]spine.ClaimedJob, len(cs))
	started := map[string][]jobEventState{}
	var order []string
	for i, c := range cs {
		jobs[i] = c.job
		if !c.recorded {
			continue
		}
		if _, ok := started[c.job.Workspace]; !ok {
			order = append(order, c.job.Workspace)
		}
		started[c.job.Workspace] = append(started[c.job.Workspace], c.event)
	}
	for _, ws := range order { // one outbox row per workspace, built here
		if err := w.jobRowEvents(ctx, ws, started[ws]); err != nil {
			return nil, err
		}
	}
	return jobs, nil
}

// fillPins reads the pinned metadata of the claimed jobs from job. Every
// queue row has its job row; a missing one is reported, not claimed empty.
func (w *writeTx) fillPins(ctx context.Context, idsArg string, cs []claimed) error {
	rows, err := w.query(ctx, qClaimJobs, sql.Named("ids", idsArg))
	if err != nil {
		return fmt.Errorf("read pins: %w", err)
	}
	pins, err := collect(rows, scanPinned)
	if err != nil {
		return fmt.Errorf("read pins: %w", err)
	}
	byID := make(map[uuid.UUID]pinnedRow, len(pins))
	for _, p := range pins {
		byID[p.job.ID] = p
	}
	for i := range cs {
		c := &cs[i].job
		p, ok := byID[c.ID]
		if !ok {
			return fmt.Errorf("read pins: job %s has a queue row but no job row", c.ID)
		}
		p.fill(c)
		cs[i].event.secrets, cs[i].event.supersededBy = p.secrets, p.supersededBy
	}
	return nil
}

// fill copies what the job row holds into c, whose queue fields are set.
func (p pinnedRow) fill(c *spine.ClaimedJob) {
	c.TriggerKind, c.TriggerRef, c.CreatedBy = p.job.TriggerKind, p.job.TriggerRef, p.job.CreatedBy
	c.CreatedAt, c.Input, c.Pin = p.job.CreatedAt, p.job.Input, p.job.Pin
}

// pinnedRow is one claim_jobs row: the job fields it holds and its
// job.started event's secrets and superseded_by.
type pinnedRow struct {
	job                   spine.ClaimedJob
	secrets, supersededBy sql.NullString
}

// scanPinned reads one claim_jobs row.
func scanPinned(rows *sql.Rows) (pinnedRow, error) {
	var p pinnedRow
	j := &p.job
	var createdAt, timeoutMS, backoffMS int64
	var input string
	var inSchema, outSchema sql.NullString
	var limits limitCols
	var pinned pinCols
	err := rows.Scan(&j.ID, &j.TriggerKind, &j.TriggerRef, &j.CreatedBy, &createdAt, &input,
		&j.Pin.GitSourceID, &j.Pin.CommitSHA, &j.Pin.AppKey, &j.Pin.ActionKey,
		&j.Pin.Entrypoint, &j.Pin.Runtime, &inSchema, &outSchema, &timeoutMS, &j.Pin.Tag,
		&j.Pin.Retry.MaxAttempts, &backoffMS, &j.Pin.Retry.Factor,
		&limits.memory, &limits.pids, &limits.cpu, &pinned.env, &pinned.warm, &p.secrets, &p.supersededBy)
	if err != nil {
		return p, err
	}
	j.CreatedAt = fromMicros(createdAt)
	j.Input = []byte(input)
	j.Pin.InputSchema, j.Pin.OutputSchema = nullJSON(inSchema), nullJSON(outSchema)
	j.Pin.Timeout = time.Duration(timeoutMS) * time.Millisecond
	j.Pin.Retry.Backoff = time.Duration(backoffMS) * time.Millisecond
	j.Pin.Limits = limits.limits()
	return p, pinned.apply(&j.Pin)
}

// Heartbeat renews the ping of every lease still owned, in one statement
// (queries/heartbeat.sql, invariant 3), and returns those leases with
// their cancel mark. On the pool it is one autocommit statement on the
// writer (driver.QueueExecutor).
func (e *executor) Heartbeat(ctx context.Context, p spine.HeartbeatParams) ([]spine.HeartbeatResult, error) {
	rows, err := e.writerQuery(ctx, qHeartbeat,
		sql.Named("leases", leasesJSON(p.Leases)), sql.Named("now", micros(resolveNow(p.Now))))
	if err != nil {
		return nil, translate(err)
	}
	return collect(rows, func(rows *sql.Rows) (spine.HeartbeatResult, error) {
		var r spine.HeartbeatResult
		return r, rows.Scan(&r.JobID, &r.CancelRequested)
	})
}

// writerQuery runs one statement with rows on the writer: in e's
// transaction, or as one autocommit statement on the pool (no BEGIN and
// COMMIT of its own around it).
func (e *executor) writerQuery(ctx context.Context, q query, args ...any) (*sql.Rows, error) {
	if e.w != nil {
		return e.w.query(ctx, q, args...)
	}
	return e.d.writerQuery(ctx, q, args...)
}

// writerExec is writerQuery for a statement without rows.
func (e *executor) writerExec(ctx context.Context, q query, args ...any) (sql.Result, error) {
	if e.w != nil {
		return e.w.exec(ctx, q, args...)
	}
	return e.d.writerExec(ctx, q, args...)
}
