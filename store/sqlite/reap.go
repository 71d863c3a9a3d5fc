package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// The reaper's ops run in the core's one write transaction on the one
// writer, so concurrent reapers in this process never handle a job twice.
// Each write is a set statement over a JSON array of the batch that
// repeats the whole guard (running, the claim token read, not marked or
// marked as the case needs, ping still stale): a job that completed or
// heartbeated in between is left alone (river#1302).

// ReapLock reads the running jobs whose ping is missing or stale
// (reap_lock.sql), with what spine.ReapRule decides from.
func (e *executor) ReapLock(ctx context.Context, p driver.ReapLockParams) ([]driver.Zombie, error) {
	cutoff := micros(resolveNow(p.Now).Add(-p.ZombieTimeout))
	var out []driver.Zombie
	err := e.write(ctx, func(w *writeTx) error {
		rows, err := w.query(ctx, qReapLock, sql.Named("cutoff", cutoff), sql.Named("limit", p.Limit))
		if err != nil {
			return fmt.Errorf("find stale jobs: %w", err)
		}
		out, err = collect(rows, func(rows *sql.Rows) (driver.Zombie, error) {
			var z driver.Zombie
			var ping sql.NullInt64
			err := rows.Scan(&z.JobID, &z.ClaimToken, &z.Worker, &z.Restarts, &z.Canceled, &ping)
			z.Ping = nullTime(ping)
			return z, err
		})
		if err != nil {
			return fmt.Errorf("find stale jobs: %w", err)
		}
		return nil
	})
	return out, err
}

// reapGuard is what every reaper write of b checks again, as stored
// (microseconds).
type reapGuard struct {
	now, cutoff int64
	candidates  string
}

// guardOf encodes b for reap_requeue.sql and reap_finish.sql: the clock,
// the cutoff, and the JSON array of [job_id, claim_token, job error]
// triples.
func guardOf(b driver.ReapBatch) (reapGuard, error) {
	rows := make([][3]string, len(b.JobIDs))
	for i, id := range b.JobIDs {
		rows[i] = [3]string{id.String(), b.ClaimTokens[i].String(), b.Errors[i]}
	}
	enc, err := json.Marshal(rows)
	if err != nil {
		return reapGuard{}, fmt.Errorf("encode reaper candidates: %w", err)
	}
	now := resolveNow(b.Now)
	return reapGuard{
		now: micros(now), cutoff: micros(now.Add(-b.ZombieTimeout)), candidates: string(enc),
	}, nil
}

// ReapRequeue puts the batch's jobs back to waiting (reap_requeue.sql),
// deletes their runtime rows and wakes their tags after commit.
func (e *executor) ReapRequeue(ctx context.Context, b driver.ReapBatch) ([]uuid.UUID, error) {
	g, err := guardOf(b)
	if err != nil {
		return nil, err
	}
	var ids []uuid.UUID
	err = e.write(ctx, func(w *writeTx) error {
		rows, err := w.query(ctx, qReapRequeue, sql.Named("candidates", g.candidates),
			sql.Named("now", g.now), sql.Named("cutoff", g.cutoff), sql.Named("restart_limit", b.RestartLimit))
		if err != nil {
			return fmt.Errorf("requeue stale jobs: %w", err)
		}
		ids, err = collect(rows, func(rows *sql.Rows) (uuid.UUID, error) {
			var id uuid.UUID
			var tag string
			if err := rows.Scan(&id, &tag); err != nil {
				return id, err
			}
			w.wake(tag)
			return id, nil
		})
		if err != nil {
			return fmt.Errorf("requeue stale jobs: %w", err)
		}
		return w.deleteRuntimes(ctx, ids)
	})
	return ids, err
}

// ReapFinish records the batch's jobs that end here (reap_finish.sql:
// canceled when marked, failure past the restart limit), removes their
// queue rows behind the same guard (reap_delete.sql) and their runtime
// rows, and wakes their waiters after commit.
func (e *executor) ReapFinish(ctx context.Context, b driver.ReapBatch) (failed, canceled []uuid.UUID, err error) {
	g, err := guardOf(b)
	if err != nil {
		return nil, nil, err
	}
	err = e.write(ctx, func(w *writeTx) error {
		rows, err := w.query(ctx, qReapFinish, sql.Named("candidates", g.candidates),
			sql.Named("now", g.now), sql.Named("cutoff", g.cutoff), sql.Named("restart_limit", b.RestartLimit))
		if err != nil {
			return fmt.Errorf("finish stale jobs: %w", translate(err))
		}
		type ending struct {
			id     uuid.UUID
			status spine.Status
		}
		ends, err := collect(rows, func(rows *sql.Rows) (ending, error) {
			var e ending
			return e, rows.Scan(&e.id, &e.status)
		})
		if err != nil {
			return fmt.Errorf("finish stale jobs: %w", err)
		}
		if len(ends) == 0 {
			return nil
		}
		ended := make(map[uuid.UUID]bool, len(ends))
		ids := make([]uuid.UUID, 0, len(ends))
		for _, e := range ends {
			ended[e.id] = true
			ids = append(ids, e.id)
			w.finished(e.id)
			if e.status == spine.StatusCanceled {
				canceled = append(canceled, e.id)
			} else {
				failed = append(failed, e.id)
			}
		}
		finished := make([]spine.Lease, 0, len(ends))
		for i, id := range b.JobIDs {
			if ended[id] {
				finished = append(finished, spine.Lease{JobID: id, ClaimToken: b.ClaimTokens[i]})
			}
		}
		if _, err := w.exec(ctx, qReapDelete, sql.Named("leases", leasesJSON(finished)),
			sql.Named("cutoff", g.cutoff)); err != nil {
			return fmt.Errorf("remove finished queue rows: %w", err)
		}
		return w.deleteRuntimes(ctx, ids)
	})
	if err != nil {
		return nil, nil, err
	}
	return failed, canceled, nil
}

// deleteRuntimes deletes the runtime rows of jobs that no longer run
// (runtime_delete_many.sql).
func (w *writeTx) deleteRuntimes(ctx context.Context, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := w.exec(ctx, qRuntimeDeleteMany, sql.Named("ids", idsJSON(ids))); err != nil {
		return fmt.Errorf("delete runtime rows: %w", err)
	}
	return nil
}
