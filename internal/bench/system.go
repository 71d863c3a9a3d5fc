package bench

import (
	"context"
	"time"
)

// System is a job queue under test. The harness calls its methods from one
// goroutine at a time, except Insert, which a feeder may call while the
// workers run.
type System interface {
	// Name is the "system" field of the result ("windforce", "river").
	Name() string
	// Database names the database kind ("postgres", "sqlite").
	Database() string
	// Insert enqueues n no-op jobs in as few batches as the system allows.
	Insert(ctx context.Context, n int) error
	// InsertOne enqueues one no-op job, alone, as a single request would.
	InsertOne(ctx context.Context) error
	// Start starts workers with the given concurrency. Their no-op handler
	// does nothing but call hook.
	Start(ctx context.Context, workers int, hook Hook) error
	// Stop stops the workers, waiting until every finished job's completion
	// is written.
	Stop(ctx context.Context) error
	// Close drops the fresh schema or file the system made and releases
	// its connections.
	Close(ctx context.Context) error
}

// Hook is what a system's no-op handler calls on each job, with the time it
// started the job.
type Hook func(started time.Time)
