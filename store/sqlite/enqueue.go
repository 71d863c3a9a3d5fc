package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/google/uuid"
	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/spine"
)

// EnqueueInsert inserts one job with its pin and its waiting queue row and,
// with notify, queues its tag's wake-up for after the commit
// (driver.JobExecutor). The queue row goes in first: when a waiting job
// holds p's coalesce key its insert fails alone (SQLite backs out just that
// statement), nothing is written and inserted is false. Inside a
// transaction the one writer makes that impossible after a coalesce miss;
// on the pool the miss and the insert are two transactions, and this is
// what sends the core back to EnqueueCoalesce.
func (e *executor) EnqueueInsert(ctx context.Context, p spine.EnqueueParams, notify bool) (spine.EnqueueResult, bool, error) {
	var inserted bool
	write := e.write
	if p.Unsynced && p.CoalesceKey == "" {
		write = e.writeUnsynced // spine.EnqueueParams.Unsynced; Sync flushes it
	}
	err := write(ctx, func(w *writeTx) error {
		var err error
		inserted, err = w.insertJob(ctx, p)
		if err != nil || !inserted {
			return err
		}
		if notify {
			w.wake(p.Pin.Tag)
		}
		return w.jobGroupEvents(ctx, events.JobQueued, oneWorkspace(p.Workspace, p.ID), nil)
	})
	if err != nil || !inserted {
		return spine.EnqueueResult{}, false, err
	}
	return spine.EnqueueResult{ID: p.ID, Generation: 1}, true, nil
}

// EnqueueCoalesce folds p into the waiting job with its coalesce key, if
// any (queries/enqueue_coalesce.sql, then enqueue_coalesce_input.sql), and
// with notify queues its tag's wake-up (driver.JobExecutor). The unique
// partial index job_queue_coalesce guards the rule.
func (e *executor) EnqueueCoalesce(ctx context.Context, p spine.EnqueueParams, notify bool) (spine.EnqueueResult, bool, error) {
	var res spine.EnqueueResult
	var ok bool
	err := e.write(ctx, func(w *writeTx) error {
		err := w.queryRow(ctx, qEnqueueCoalesce, coalesceArgs(p)...).Scan(&res.ID, &res.Generation)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("coalesce: %w", translate(err))
		}
		if _, err := w.exec(ctx, qEnqueueCoalesceInput,
			sql.Named("id", res.ID), sql.Named("input", string(p.Input)),
			sql.Named("generation", res.Generation)); err != nil {
			return fmt.Errorf("coalesce input: %w", translate(err))
		}
		ok, res.Coalesced = true, true
		if notify {
			w.wake(p.Pin.Tag)
		}
		return nil
	})
	if err != nil || !ok {
		return spine.EnqueueResult{}, false, err
	}
	return res, true, nil
}

// EnqueueCoalesceRelease takes p's coalesce key from the waiting job that
// holds it with another pin (queries/enqueue_coalesce_release.sql;
// driver.JobExecutor).
func (e *executor) EnqueueCoalesceRelease(ctx context.Context, p spine.EnqueueParams) (bool, error) {
	var released bool
	err := e.write(ctx, func(w *writeTx) error {
		r, err := w.exec(ctx, qEnqueueRelease, coalesceArgs(p)...)
		if err != nil {
			return fmt.Errorf("release coalesce key: %w", translate(err))
		}
		n, err := r.RowsAffected()
		released = n > 0
		return err
	})
	return released, err
}

// coalesceArgs name p's coalesce scope and its pin, as insertJob stores
// it, for enqueue_coalesce.sql and enqueue_coalesce_release.sql.
func coalesceArgs(p spine.EnqueueParams) []any {
	pin := p.Pin
	hash := func(v []byte) any {
		if len(v) == 0 {
			return nil
		}
		return schemaHash(v)
	}
	return append([]any{
		sql.Named("workspace", p.Workspace),
		sql.Named("app_key", pin.AppKey),
		sql.Named("action_key", pin.ActionKey),
		sql.Named("coalesce_key", p.CoalesceKey),
		sql.Named("git_source_id", pin.GitSourceID),
		sql.Named("commit_sha", pin.CommitSHA),
		sql.Named("entrypoint", pin.Entrypoint),
		sql.Named("runtime", pin.Runtime),
		sql.Named("input_schema_hash", hash(pin.InputSchema)),
		sql.Named("output_schema_hash", hash(pin.OutputSchema)),
		sql.Named("timeout_ms", durationMS(pin.Timeout)),
		sql.Named("tag", pin.Tag),
		sql.Named("max_attempts", pin.Retry.MaxAttempts),
		sql.Named("backoff_ms", durationMS(pin.Retry.Backoff)),
		sql.Named("backoff_factor", pin.Retry.Factor),
	}, append(limitArgs(pin.Limits), pinArgs(pin)...)...)
}

// EnqueueInsertBatch inserts jobs without a coalesce key one by one in the
// write transaction (their schemas are stored once: pinned_schema.go) and
// queues one wake-up per tag (driver.JobExecutor). Their job.queued
// events are one outbox row per workspace, built from what was inserted
// (queuedEvent).
func (e *executor) EnqueueInsertBatch(ctx context.Context, ps []spine.EnqueueParams, tags []string) error {
	return e.write(ctx, func(w *writeTx) error {
		queued := map[string][]jobEventState{}
		var order []string
		recorded := map[string]bool{}
		for _, p := range ps {
			p.Now = resolveNow(p.Now) // the times insertJob writes, for the event
			if p.ScheduledFor.IsZero() {
				p.ScheduledFor = p.Now
			}
			if _, err := w.insertJob(ctx, p); err != nil {
				return err
			}
			rec, seen := recorded[p.Workspace]
			if !seen {
				var err error
				if rec, err = w.recordsEvents(ctx, p.Workspace); err != nil {
					return err
				}
				recorded[p.Workspace] = rec
				order = append(order, p.Workspace)
			}
			if rec {
				queued[p.Workspace] = append(queued[p.Workspace], queuedEvent(p))
			}
		}
		for _, tag := range tags {
			w.wake(tag)
		}
		for _, ws := range order {
			if err := w.jobRowEvents(ctx, ws, queued[ws]); err != nil {
				return err
			}
		}
		return nil
	})
}

// queuedEvent is the job.queued event of the job insertJob just wrote for
// p (Now and ScheduledFor resolved), as the job_event view shows a new
// job: waiting, attempt 1, restarts 0, generation 1 (enqueue_insert_queue),
// no secrets yet and no follow-up (a batch holds no coalesce keys).
func queuedEvent(p spine.EnqueueParams) jobEventState {
	created := micros(p.Now)
	return jobEventState{
		id: p.ID, typ: string(events.JobQueued), at: created, status: string(spine.StatusQueued),
		priority: int64(p.Priority), scheduledFor: sql.NullInt64{Int64: micros(resolveNow(p.ScheduledFor)), Valid: true},
		attempt: 1, generation: 1,
	}
}

// insertJob inserts the waiting queue row and the job row with its pin;
// false, with nothing written, when a waiting job holds p's coalesce key.
// The pin's schemas go to job_schema, once per content; the job row keeps
// their hashes. A zero Now is the clock, and ScheduledFor defaults to Now,
// as on Postgres.
func (w *writeTx) insertJob(ctx context.Context, p spine.EnqueueParams) (bool, error) {
	pin := p.Pin
	if p.AtCommit {
		if err := w.appAtCommit(ctx, p.Workspace, pin); err != nil {
			return false, err
		}
	}
	now := resolveNow(p.Now)
	scheduled := now
	if !p.ScheduledFor.IsZero() {
		scheduled = resolveNow(p.ScheduledFor)
	}
	err := w.insertQueue(ctx, queueRow{
		id: p.ID, workspace: p.Workspace, app: pin.AppKey, action: pin.ActionKey,
		tag: pin.Tag, priority: p.Priority, scheduledFor: scheduled,
		coalesceKey: p.CoalesceKey,
	})
	if p.CoalesceKey != "" && uniqueViolation(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	createdAt := micros(now)
	// The later of the job's time and the real clock: the job is created
	// before used_at + schemaTouch, and a backdated job still refreshes
	// the rows (pinned_schema.go).
	usedAt := max(createdAt, micros(time.Now()))
	inHash, err := w.pinSchema(ctx, pin.InputSchema, usedAt)
	if err != nil {
		return false, fmt.Errorf("insert job %s: %w", p.ID, err)
	}
	outHash, err := w.pinSchema(ctx, pin.OutputSchema, usedAt)
	if err != nil {
		return false, fmt.Errorf("insert job %s: %w", p.ID, err)
	}
	args := append([]any{
		sql.Named("id", p.ID),
		sql.Named("workspace", p.Workspace),
		sql.Named("trigger_kind", string(p.TriggerKind)),
		sql.Named("trigger_ref", p.TriggerRef),
		sql.Named("created_by", p.CreatedBy),
		sql.Named("created_at", createdAt),
		sql.Named("input", string(p.Input)),
		sql.Named("git_source_id", pin.GitSourceID),
		sql.Named("commit_sha", pin.CommitSHA),
		sql.Named("app_key", pin.AppKey),
		sql.Named("action_key", pin.ActionKey),
		sql.Named("entrypoint", pin.Entrypoint),
		sql.Named("runtime", pin.Runtime),
		sql.Named("input_schema_hash", inHash),
		sql.Named("output_schema_hash", outHash),
		sql.Named("timeout_ms", durationMS(pin.Timeout)),
		sql.Named("tag", pin.Tag),
		sql.Named("priority", p.Priority),
		sql.Named("max_attempts", pin.Retry.MaxAttempts),
		sql.Named("backoff_ms", durationMS(pin.Retry.Backoff)),
		sql.Named("backoff_factor", pin.Retry.Factor),
		sql.Named("coalesce_key", textArg(p.CoalesceKey)),
	}, append(limitArgs(pin.Limits), pinArgs(pin)...)...)
	if _, err := w.exec(ctx, qEnqueueInsertJob, args...); err != nil {
		return false, fmt.Errorf("insert job %s: %w", p.ID, translate(err))
	}
	return true, nil
}

// uniqueViolation reports a unique index refusing a row (not the primary
// key: a repeated id is a conflict, not a coalesce key taken).
func uniqueViolation(err error) bool {
	var se *msqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}

// queueRow is a fresh waiting job_queue row (enqueue, reopen).
type queueRow struct {
	id                     uuid.UUID
	workspace, app, action string
	tag                    string
	priority               int
	scheduledFor           time.Time
	coalesceKey            string
}

func (w *writeTx) insertQueue(ctx context.Context, r queueRow) error {
	if _, err := w.exec(ctx, qEnqueueInsertQueue,
		sql.Named("id", r.id),
		sql.Named("workspace", r.workspace),
		sql.Named("app_key", r.app),
		sql.Named("action_key", r.action),
		sql.Named("tag", r.tag),
		sql.Named("priority", r.priority),
		sql.Named("scheduled_for", micros(r.scheduledFor)),
		sql.Named("coalesce_key", textArg(r.coalesceKey)),
	); err != nil {
		return fmt.Errorf("insert queue row %s: %w", r.id, translate(err))
	}
	return nil
}

// Sync flushes the write-ahead log to disk (driver.JobExecutor): every
// commit before it, unsynced ones too (Driver.writeUnsynced), is then
// durable against a crash of the machine. A commit's frames are in the
// log when it returns, and a checkpoint syncs the log before it copies
// them; so one fsync of the log covers them all.
func (e *executor) Sync(context.Context) error {
	f, err := os.Open(e.d.wal)
	if errors.Is(err, os.ErrNotExist) {
		return nil // no log: every commit is in the database file, synced by its checkpoint
	}
	if err != nil {
		return fmt.Errorf("sync the write-ahead log: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync the write-ahead log: %w", err)
	}
	return nil
}

// appAtCommit refuses with spine.ErrStalePin a job whose app is no longer
// at its pin's source and commit (spine.EnqueueParams.AtCommit).
func (w *writeTx) appAtCommit(ctx context.Context, workspace string, pin spine.Pin) error {
	var at bool
	err := w.queryRow(ctx, qCatalogAppAtCommit, sql.Named("workspace", workspace), sql.Named("app_key", pin.AppKey),
		sql.Named("git_source_id", pin.GitSourceID), sql.Named("commit_sha", pin.CommitSHA)).Scan(&at)
	if err != nil {
		return fmt.Errorf("check the app's commit: %w", translate(err))
	}
	if !at {
		return spine.ErrStalePin
	}
	return nil
}
