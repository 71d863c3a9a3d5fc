package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// Sweep deletes one batch of finished jobs in one statement (sweep.sql),
// bounded by the query timeout.
func (e *executor) Sweep(ctx context.Context, before time.Time, limit int) (int, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	var n int
	err := e.q.QueryRow(ctx, qSweep, namedArgs{
		"before": before, "batch_size": limit,
	}).Scan(&n)
	return n, translate(err)
}

// SweepSchemas deletes the job_schema rows no job can reference any more
// (sweep_schemas.sql).
func (e *executor) SweepSchemas(ctx context.Context) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	_, err := e.q.Exec(ctx, qSweepSchemas, namedArgs{
		"grace_ms": schemaGrace.Milliseconds(), "schema_touch_ms": schemaTouch.Milliseconds(),
	})
	return translate(err)
}

// Health reads the queue_health view (health.sql).
func (e *executor) Health(ctx context.Context) ([]spine.TagHealth, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qHealth)
	if err != nil {
		return nil, translate(err)
	}
	health, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (spine.TagHealth, error) {
		return driver.ScanTagHealth(row.Scan)
	})
	return health, translate(err)
}

// SetZombieTimeout records the zombie timeout in spine_setting
// (set_zombie_timeout.sql).
func (e *executor) SetZombieTimeout(ctx context.Context, d time.Duration) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	_, err := e.q.Exec(ctx, qSetZombieTimeout, namedArgs{"zombie_timeout_ms": d.Milliseconds()})
	return translate(err)
}
