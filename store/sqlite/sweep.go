package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/windforce/windforce/spine"
)

// defaultSweepBatch bounds one retention batch when the caller gives none.
const defaultSweepBatch = 1000

// Sweep deletes finished jobs completed before p.Before (invariant 8): their
// job_completed, job, job_logs and job_audit rows, p.BatchSize jobs per
// transaction so the writer is never held long, until a batch comes back
// short, and then the pinned schemas no job can reference any more. Only
// job_completed picks the jobs, so queued and running jobs are never
// touched.
func (s *Driver) Sweep(ctx context.Context, p spine.SweepParams) (int, error) {
	if p.BatchSize <= 0 {
		p.BatchSize = defaultSweepBatch
	}
	before := micros(p.Before)
	total := 0
	for {
		var n int
		err := s.write(ctx, func(w *writeTx) error {
			var werr error
			n, werr = w.sweepBatch(ctx, before, p.BatchSize)
			return werr
		})
		if err != nil {
			return total, fmt.Errorf("sweep unreferenced schemas: %w", err)
		}
		total += n
		if n < p.BatchSize {
			break
		}
	}
	err := s.write(ctx, func(w *writeTx) error { return w.sweepSchemas(ctx, time.Now()) })
	if err != nil {
		return total, fmt.Errorf("sweep unreferenced schemas: %w", err)
	}
	return total, nil
}

func (w *writeTx) sweepBatch(ctx context.Context, before int64, batch int) (int, error) {
	rows, err := w.query(ctx, qSweep, sql.Named("before", before), sql.Named("batch", batch))
	if err != nil {
		return 0, fmt.Errorf("delete completed rows: %w", err)
	}
	ids, err := collect(rows, scanID)
	if err != nil {
		return 0, fmt.Errorf("delete completed rows: %w", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	arg := sql.Named("ids", idsJSON(ids))
	for _, q := range []query{qSweepJob, qSweepLogs, qSweepAudit} {
		if _, err := w.exec(ctx, q, arg); err != nil {
			return 0, fmt.Errorf("%s: %w", q, err)
		}
	}
	return len(ids), nil
}
