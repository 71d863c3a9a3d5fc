package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// defaultReapLimit bounds one reaper pass when the caller gives no limit.
const defaultReapLimit = 1000

// Reap handles running jobs whose worker stopped heartbeating (invariant 4)
// in one transaction on the one writer, so concurrent reapers in this
// process never handle a job twice. It reads the stale leases, then acts
// with set statements that each repeat the whole guard (running, the claim
// token it read, not marked or marked as the case needs, ping still stale):
// a job that completed or heartbeated in between would be left alone
// (river#1302).
func (s *Driver) Reap(ctx context.Context, p spine.ReapParams) (spine.ReapResult, error) {
	if p.Limit <= 0 {
		p.Limit = defaultReapLimit
	}
	now := resolveNow(p.Now)
	g := reapGuard{
		now:    micros(now),
		cutoff: micros(now.Add(-p.ZombieTimeout)),
		limit:  max(p.RestartLimit, 0),
	}
	var res spine.ReapResult
	err := s.write(ctx, func(w *writeTx) error {
		var werr error
		res, werr = w.reap(ctx, g, p.Limit)
		return werr
	})
	if err != nil {
		return spine.ReapResult{}, fmt.Errorf("reap: %w", err)
	}
	return res, nil
}

// reapGuard is what every reaper write checks again.
type reapGuard struct {
	now, cutoff int64
	limit       int
}

// reap runs one pass: read the stale leases, split them by spine.ReapRule,
// then requeue and finish them, each write repeating the guard.
func (w *writeTx) reap(ctx context.Context, g reapGuard, limit int) (spine.ReapResult, error) {
	var res spine.ReapResult
	zombies, err := w.staleLeases(ctx, g, limit)
	if err != nil || len(zombies) == 0 {
		return res, err
	}
	requeue, finish, err := splitZombies(zombies, g.limit)
	if err != nil {
		return res, err
	}
	if len(requeue.leases) > 0 {
		if res.Requeued, err = w.reapRequeue(ctx, g, requeue.candidates); err != nil {
			return res, err
		}
	}
	var finished []spine.Lease
	if len(finish.leases) > 0 {
		if finished, err = w.reapFinish(ctx, g, finish.leases, finish.candidates, &res); err != nil {
			return res, err
		}
	}
	if len(finished) > 0 {
		if _, err := w.exec(ctx, qReapDelete, sql.Named("leases", leasesJSON(finished)),
			sql.Named("cutoff", g.cutoff)); err != nil {
			return res, fmt.Errorf("remove finished queue rows: %w", err)
		}
	}
	handled := append(append([]uuid.UUID{}, res.Requeued...), res.Failed...)
	handled = append(handled, res.Canceled...)
	if len(handled) > 0 {
		if _, err := w.exec(ctx, qRuntimeDeleteMany, sql.Named("ids", idsJSON(handled))); err != nil {
			return res, fmt.Errorf("delete runtime rows: %w", err)
		}
	}
	return res, nil
}

// zombie is a stale lease as reap_candidates.sql read it.
type zombie struct {
	lease spine.Lease
	z     spine.Zombie
}

// reapBatch is what one reaper write acts on: the leases, and the same as
// the JSON array of [job_id, claim_token, job error] its SQL reads.
type reapBatch struct {
	leases     []spine.Lease
	rows       [][3]string
	candidates string
}

// splitZombies splits the zombies by spine.ReapRule under restartLimit into
// those to requeue and those to finish (failed or canceled), each with the
// encoded job error the SQL stores: the text is built here, in Go, as on
// Postgres, never in SQL. A canceled job stores none (reap_finish.sql
// writes NULL for it).
func splitZombies(zombies []zombie, restartLimit int) (requeue, finish reapBatch, err error) {
	for _, z := range zombies {
		action, jobErr := spine.ReapRule(z.z, restartLimit)
		msg := ""
		if action != spine.ReapCancel {
			if msg, err = jobErr.Encode(); err != nil {
				return requeue, finish, err
			}
		}
		b := &finish
		if action == spine.ReapRequeue {
			b = &requeue
		}
		b.leases = append(b.leases, z.lease)
		b.rows = append(b.rows, [3]string{z.lease.JobID.String(), z.lease.ClaimToken.String(), msg})
	}
	for _, b := range []*reapBatch{&requeue, &finish} {
		enc, err := json.Marshal(b.rows)
		if err != nil {
			return requeue, finish, fmt.Errorf("encode reaper candidates: %w", err)
		}
		b.candidates = string(enc)
	}
	return requeue, finish, nil
}

// staleLeases reads the running jobs whose ping is missing or stale, with
// what spine.ReapRule decides from.
func (w *writeTx) staleLeases(ctx context.Context, g reapGuard, limit int) ([]zombie, error) {
	rows, err := w.query(ctx, qReapCandidates, sql.Named("cutoff", g.cutoff), sql.Named("limit", limit))
	if err != nil {
		return nil, fmt.Errorf("find stale jobs: %w", err)
	}
	out, err := collect(rows, func(rows *sql.Rows) (zombie, error) {
		var z zombie
		var ping sql.NullInt64
		err := rows.Scan(&z.lease.JobID, &z.lease.ClaimToken, &z.z.Worker, &z.z.Restarts, &z.z.Canceled, &ping)
		z.z.Ping = nullTime(ping)
		return z, err
	})
	if err != nil {
		return nil, fmt.Errorf("find stale jobs: %w", err)
	}
	return out, nil
}

// reapRequeue puts the stale jobs under the restart limit back to waiting,
// with the last_error candidates carry, and wakes their tags.
func (w *writeTx) reapRequeue(ctx context.Context, g reapGuard, candidates string) ([]uuid.UUID, error) {
	rows, err := w.query(ctx, qReapRequeue, sql.Named("candidates", candidates),
		sql.Named("now", g.now), sql.Named("cutoff", g.cutoff), sql.Named("restart_limit", g.limit))
	if err != nil {
		return nil, fmt.Errorf("requeue stale jobs: %w", err)
	}
	ids, err := collect(rows, func(rows *sql.Rows) (uuid.UUID, error) {
		var id uuid.UUID
		var tag string
		err := rows.Scan(&id, &tag)
		w.wake(tag)
		return id, err
	})
	if err != nil {
		return nil, fmt.Errorf("requeue stale jobs: %w", err)
	}
	return ids, nil
}

// reapFinish records the stale jobs that end here (canceled when marked,
// failure past the restart limit) and returns the leases of those it
// recorded.
func (w *writeTx) reapFinish(ctx context.Context, g reapGuard, stale []spine.Lease, candidates string, res *spine.ReapResult) ([]spine.Lease, error) {
	rows, err := w.query(ctx, qReapFinish, sql.Named("candidates", candidates),
		sql.Named("now", g.now), sql.Named("cutoff", g.cutoff), sql.Named("restart_limit", g.limit))
	if err != nil {
		return nil, fmt.Errorf("finish stale jobs: %w", translate(err))
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
		return nil, fmt.Errorf("finish stale jobs: %w", err)
	}
	ended := map[uuid.UUID]bool{}
	for _, e := range ends {
		ended[e.id] = true
		w.finished(e.id)
		if e.status == spine.StatusCanceled {
			res.Canceled = append(res.Canceled, e.id)
		} else {
			res.Failed = append(res.Failed, e.id)
		}
	}
	var finished []spine.Lease
	for _, l := range stale {
		if ended[l.JobID] {
			finished = append(finished, l)
		}
	}
	return finished, nil
}
