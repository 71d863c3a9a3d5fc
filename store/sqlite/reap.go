package sqlite

import (
	"context"
	"database/sql"
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
func (s *Store) Reap(ctx context.Context, p spine.ReapParams) (spine.ReapResult, error) {
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

func (w *writeTx) reap(ctx context.Context, g reapGuard, limit int) (spine.ReapResult, error) {
	var res spine.ReapResult
	stale, err := w.staleLeases(ctx, g, limit)
	if err != nil || len(stale) == 0 {
		return res, err
	}
	candidates := leasesJSON(stale)
	if res.Requeued, err = w.reapRequeue(ctx, g, candidates); err != nil {
		return res, err
	}
	finished, err := w.reapFinish(ctx, g, stale, candidates, &res)
	if err != nil {
		return res, err
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

// staleLeases reads the running jobs whose ping is missing or stale.
func (w *writeTx) staleLeases(ctx context.Context, g reapGuard, limit int) ([]spine.Lease, error) {
	rows, err := w.query(ctx, qReapCandidates, sql.Named("cutoff", g.cutoff), sql.Named("limit", limit))
	if err != nil {
		return nil, fmt.Errorf("find stale jobs: %w", err)
	}
	out, err := collect(rows, func(rows *sql.Rows) (spine.Lease, error) {
		var l spine.Lease
		return l, rows.Scan(&l.JobID, &l.ClaimToken)
	})
	if err != nil {
		return nil, fmt.Errorf("find stale jobs: %w", err)
	}
	return out, nil
}

// reapRequeue puts the stale jobs under the restart limit back to waiting
// and wakes their tags.
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
// failure past the restart limit) and returns their leases.
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
