package store

import (
	"context"
	"fmt"
	"time"

	"github.com/windforce/windforce/spine"
)

// defaultSweepBatch bounds each sweep batch whose BatchSize is not
// positive.
const defaultSweepBatch = 1000

// Sweep deletes finished jobs (job_completed, job, job_logs, job_audit)
// completed before p.Before, in batches of p.BatchSize, and returns how
// many jobs it deleted. Queued and running jobs are never touched
// (invariant 8).
//
// Each batch is its own short transaction, so the sweep never holds the
// database (SQLite's one writer) for long, and the query timeout bounds
// each batch, not the whole sweep. It stops at the first short batch, then
// deletes the pinned schemas no job can reference any more, and the
// settled event deliveries and delivered outbox events of the same age.
func (s *Store) Sweep(ctx context.Context, p spine.SweepParams) (int, error) {
	if p.BatchSize <= 0 {
		p.BatchSize = defaultSweepBatch
	}
	total := 0
	for {
		n, err := s.ex.Sweep(ctx, p.Before, p.BatchSize)
		total += n
		if err != nil {
			return total, fmt.Errorf("sweep finished jobs: %w", err)
		}
		if n < p.BatchSize {
			break
		}
	}
	if err := s.ex.SweepSchemas(ctx); err != nil {
		return total, fmt.Errorf("sweep unreferenced schemas: %w", err)
	}
	if err := s.sweepEvents(ctx, p.Before, p.BatchSize); err != nil {
		return total, err
	}
	return total, nil
}

// Health reads the queue_health view.
func (s *Store) Health(ctx context.Context) ([]spine.TagHealth, error) {
	h, err := s.ex.Health(ctx)
	if err != nil {
		return nil, fmt.Errorf("read queue health: %w", err)
	}
	return h, nil
}

// SetZombieTimeout records the zombie timeout the queue_health view uses
// to count expired heartbeats.
func (s *Store) SetZombieTimeout(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("set zombie timeout: %w: %s is not positive", spine.ErrInvalid, d)
	}
	if err := s.ex.SetZombieTimeout(ctx, d); err != nil {
		return fmt.Errorf("set zombie timeout: %w", err)
	}
	return nil
}
