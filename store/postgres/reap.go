package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
)

// defaultReapLimit bounds a reaper pass whose Limit is not positive.
const defaultReapLimit = 1000

// stale is a running job whose worker stopped heartbeating, as reap_lock.sql
// read it.
type stale struct {
	id       uuid.UUID
	token    uuid.UUID
	worker   string
	restarts int
	canceled bool
	ping     *time.Time
}

// Reap handles dead workers' jobs (invariant 4) in one transaction: lock
// the stale rows with SKIP LOCKED, then requeue or finish them with writes
// that repeat the whole guard (queries/reap_*.sql).
func (s *Driver) Reap(ctx context.Context, p spine.ReapParams) (spine.ReapResult, error) {
	if p.ZombieTimeout <= 0 {
		return spine.ReapResult{}, fmt.Errorf("reap: %w: zombie timeout %s is not positive", spine.ErrInvalid, p.ZombieTimeout)
	}
	if p.Limit <= 0 {
		p.Limit = defaultReapLimit
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	var res spine.ReapResult
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		jobs, err := lockStale(ctx, tx, p)
		if err != nil || len(jobs) == 0 {
			return err
		}
		if res.Requeued, err = s.reapRequeue(ctx, tx, p, jobs); err != nil {
			return err
		}
		res.Failed, res.Canceled, err = s.reapFinish(ctx, tx, p, jobs)
		return err
	})
	if err != nil {
		return spine.ReapResult{}, fmt.Errorf("reap: %w", err)
	}
	return res, nil
}

// lockStale runs reap_lock.sql.
func lockStale(ctx context.Context, tx pgx.Tx, p spine.ReapParams) ([]stale, error) {
	rows, err := tx.Query(ctx, qReapLock, pgx.StrictNamedArgs{
		"now":               timeArg(p.Now),
		"zombie_timeout_ms": p.ZombieTimeout.Milliseconds(),
		"limit":             p.Limit,
	})
	if err != nil {
		return nil, translate(err)
	}
	jobs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (stale, error) {
		var j stale
		err := row.Scan(&j.id, &j.token, &j.worker, &j.restarts, &j.canceled, &j.ping)
		return j, err
	})
	return jobs, translate(err)
}

// reapBatch is the column arrays of one reaper write: the jobs, the claim
// tokens reap_lock.sql read, and the job error each one stores.
type reapBatch struct {
	ids, tokens []uuid.UUID
	errs        []string
}

func (b *reapBatch) add(j stale, jobErr string) {
	b.ids, b.tokens, b.errs = append(b.ids, j.id), append(b.tokens, j.token), append(b.errs, jobErr)
}

// reapBatchOf collects the locked jobs that spine.ReapRule under
// restartLimit sends to this write — ReapRequeue when requeue is set, else
// ReapFail and ReapCancel — each with the encoded job error it stores. A
// canceled job stores none: reap_finish.sql writes NULL for it, and its
// placeholder is JSON null so that the cast can never fail.
func reapBatchOf(jobs []stale, restartLimit int, requeue bool) (reapBatch, error) {
	var b reapBatch
	for _, j := range jobs {
		action, jobErr := spine.ReapRule(spine.Zombie{
			Worker: j.worker, Restarts: j.restarts, Canceled: j.canceled, Ping: j.ping,
		}, restartLimit)
		if (action == spine.ReapRequeue) != requeue {
			continue
		}
		msg := "null"
		if action != spine.ReapCancel {
			var err error
			if msg, err = jobErr.Encode(); err != nil {
				return b, err
			}
		}
		b.add(j, msg)
	}
	return b, nil
}

// reapRequeue sends the jobs under the restart limit back to waiting.
func (s *Driver) reapRequeue(ctx context.Context, tx pgx.Tx, p spine.ReapParams, jobs []stale) ([]uuid.UUID, error) {
	b, err := reapBatchOf(jobs, p.RestartLimit, true)
	if err != nil || len(b.ids) == 0 {
		return nil, err
	}
	rows, err := tx.Query(ctx, qReapRequeue, s.reapArgs(p, b.ids, b.tokens, b.errs))
	if err != nil {
		return nil, translate(err)
	}
	requeued, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	return requeued, translate(err)
}

// reapFinish finishes the cancel-marked jobs as canceled and the jobs past
// the restart limit as failure.
func (s *Driver) reapFinish(ctx context.Context, tx pgx.Tx, p spine.ReapParams, jobs []stale) (failed, canceled []uuid.UUID, err error) {
	b, err := reapBatchOf(jobs, p.RestartLimit, false)
	if err != nil || len(b.ids) == 0 {
		return nil, nil, err
	}
	rows, err := tx.Query(ctx, qReapFinish, pgx.StrictNamedArgs{
		"job_ids":           b.ids,
		"claim_tokens":      b.tokens,
		"errors":            b.errs,
		"now":               timeArg(p.Now),
		"zombie_timeout_ms": p.ZombieTimeout.Milliseconds(),
		"restart_limit":     p.RestartLimit,
		"done_channel":      s.doneChannel,
	})
	if err != nil {
		return nil, nil, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id uuid.UUID
		var status string
		if err := rows.Scan(&id, &status); err != nil {
			return nil, nil, translate(err)
		}
		if spine.Status(status) == spine.StatusCanceled {
			canceled = append(canceled, id)
		} else {
			failed = append(failed, id)
		}
	}
	return failed, canceled, translate(rows.Err())
}

// reapArgs are reap_requeue.sql's arguments.
func (s *Driver) reapArgs(p spine.ReapParams, ids, tokens []uuid.UUID, errs []string) pgx.StrictNamedArgs {
	return pgx.StrictNamedArgs{
		"job_ids":           ids,
		"claim_tokens":      tokens,
		"errors":            errs,
		"now":               timeArg(p.Now),
		"zombie_timeout_ms": p.ZombieTimeout.Milliseconds(),
		"restart_limit":     p.RestartLimit,
		"channel":           s.channel,
	}
}
