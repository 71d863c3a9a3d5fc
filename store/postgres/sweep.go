package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
)

// defaultSweepBatch bounds each sweep statement whose BatchSize is not
// positive.
const defaultSweepBatch = 1000

// Sweep deletes finished jobs completed before p.Before in batches, each
// its own short statement, until a batch comes back short (invariant 8),
// and then the pinned schemas no job can reference any more. The query
// timeout bounds each statement, not the whole sweep.
func (s *Driver) Sweep(ctx context.Context, p spine.SweepParams) (int, error) {
	if p.BatchSize <= 0 {
		p.BatchSize = defaultSweepBatch
	}
	total := 0
	for {
		n, err := s.sweepBatch(ctx, p)
		total += n
		if err != nil {
			return total, fmt.Errorf("sweep finished jobs: %w", err)
		}
		if n < p.BatchSize {
			break
		}
	}
	if _, err := s.sweepSchemas(ctx); err != nil {
		return total, fmt.Errorf("sweep unreferenced schemas: %w", err)
	}
	return total, nil
}

func (s *Driver) sweepBatch(ctx context.Context, p spine.SweepParams) (int, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	var n int
	err := s.pool.QueryRow(ctx, qSweep, pgx.StrictNamedArgs{
		"before": p.Before, "batch_size": p.BatchSize,
	}).Scan(&n)
	return n, translate(err)
}

// Health reads the queue_health view.
func (s *Driver) Health(ctx context.Context) ([]spine.TagHealth, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, qHealth)
	if err != nil {
		return nil, fmt.Errorf("read queue health: %w", translate(err))
	}
	health, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (spine.TagHealth, error) {
		var h spine.TagHealth
		var oldest float64
		err := row.Scan(&h.Workspace, &h.Tag, &h.Waiting, &h.Scheduled, &h.Running, &h.Failed24h,
			&h.ExpiredHeartbeats, &oldest, &h.MaxAttempt, &h.MaxRestarts)
		h.OldestWaitingAge = time.Duration(oldest * float64(time.Second))
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("read queue health: %w", translate(err))
	}
	return health, nil
}

// SetZombieTimeout records the zombie timeout queue_health counts expired
// heartbeats with.
func (s *Driver) SetZombieTimeout(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("set zombie timeout: %w: %s is not positive", spine.ErrInvalid, d)
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	_, err := s.pool.Exec(ctx, qSetZombieTimeout, pgx.StrictNamedArgs{"zombie_timeout_ms": d.Milliseconds()})
	if err != nil {
		return fmt.Errorf("set zombie timeout: %w", translate(err))
	}
	return nil
}
