package driver

import (
	"context"

	"github.com/windforce/windforce/spine"

	"github.com/google/uuid"
)

// Driver is one database under the store core: its pool, its wake-up
// channels and its migrations. It holds no orchestration: the core above
// it decides what to run and in which transaction.
type Driver interface {
	// Executor runs each operation on the pool, in a transaction of its
	// own when it writes.
	Executor() Executor

	// Subscribe returns a channel that receives a value soon after a job is
	// enqueued (or reopened, retried, released) on one of tags, and a
	// function that ends the subscription (spine.Store.Subscribe).
	Subscribe(tags []string) (<-chan struct{}, func())
	// SubscribeCompletion returns a channel that receives a value soon
	// after job id becomes terminal (spine.Store.SubscribeCompletion).
	SubscribeCompletion(id uuid.UUID) (<-chan spine.Finished, func())

	// SubscribeDispatch gives worker the inbox of the jobs dispatched to
	// it (spine.Store.SubscribeDispatch); a driver without dispatch
	// returns one that never fills.
	SubscribeDispatch(worker string) (*spine.Inbox, func())

	// Migrate applies the embedded, numbered migrations not yet applied.
	Migrate(ctx context.Context) error
	// SchemaVersion reports the applied and the latest migration.
	SchemaVersion(ctx context.Context) (current, latest int, err error)

	// Close releases connections and stops the listener.
	Close()
}

// Executor runs the driver's operations, on the pool or inside one
// transaction. Each operation is one statement (or a short fixed sequence
// of them) named like its SQL file; it translates the database's errors
// to the spine's typed ones (spine.ErrNotFound, spine.ErrConflict …).
type Executor interface {
	// Tx runs fn in one transaction and commits when fn returns nil; an
	// error or panic rolls back. On an executor that is a transaction
	// already, Tx is a savepoint. The Executor fn receives is valid only
	// while fn runs. Wake-ups queued inside are sent only after the
	// outermost commit.
	Tx(ctx context.Context, fn func(Executor) error) error

	JobExecutor
	LifecycleExecutor
	QueueExecutor
	CatalogExecutor
	ScheduleExecutor
	AuthExecutor
	JobSecretsExecutor
	EventExecutor
	SecretExecutor
	SinkExecutor
	RelayExecutor
	EventViewExecutor
}
