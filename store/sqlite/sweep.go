package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// Sweep deletes one batch of finished jobs (sweep.sql), then their job,
// job_logs and job_audit rows, in one write transaction (on the pool: one
// of its own, so the writer is never held long).
func (e *executor) Sweep(ctx context.Context, before time.Time, limit int) (int, error) {
	var n int
	err := e.write(ctx, func(w *writeTx) error {
		var werr error
		n, werr = w.sweepBatch(ctx, micros(before), limit)
		return werr
	})
	return n, err
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

// SweepSchemas deletes the job_schema rows no job can reference any more
// (sweep_schemas.sql).
func (e *executor) SweepSchemas(ctx context.Context) error {
	return e.write(ctx, func(w *writeTx) error { return w.sweepSchemas(ctx, time.Now()) })
}

// Health reads the queue_health view (health.sql), on the reader pool.
func (e *executor) Health(ctx context.Context) ([]spine.TagHealth, error) {
	rows, err := e.read(ctx, qHealth)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(rows *sql.Rows) (spine.TagHealth, error) {
		return driver.ScanTagHealth(rows.Scan)
	})
}

// SetZombieTimeout records the zombie timeout in spine_setting
// (set_zombie_timeout.sql).
func (e *executor) SetZombieTimeout(ctx context.Context, d time.Duration) error {
	return e.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qSetZombieTimeout, sql.Named("ms", durationMS(d)))
		return err
	})
}
