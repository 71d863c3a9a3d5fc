package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/store/driver"
)

// executor runs the driver's operations on q: the pool, or one
// transaction (tx non-nil).
type executor struct {
	d  *Driver
	q  querier
	tx pgx.Tx
}

var _ driver.Driver = (*Driver)(nil)

// Executor runs each operation on the pool.
func (s *Driver) Executor() driver.Executor { return s.exec }

// TxExecutor runs the operations inside the caller's transaction tx, so a
// library user can enqueue through the core in its own transaction: the
// job exists, and its tag is notified, only if tx commits. tx must be at
// READ COMMITTED (the default) for coalescing to retry correctly.
func (s *Driver) TxExecutor(tx pgx.Tx) driver.Executor {
	return &executor{d: s, q: tx, tx: tx}
}

// Tx runs fn in a transaction on the pool, or in a savepoint of e's.
func (e *executor) Tx(ctx context.Context, fn func(driver.Executor) error) error {
	var tx pgx.Tx
	var err error
	if e.tx != nil {
		tx, err = e.tx.Begin(ctx)
	} else {
		// The query timeout bounds the whole transaction, as it bounds
		// one statement on the pool.
		var cancel context.CancelFunc
		ctx, cancel = e.d.op(ctx)
		defer cancel()
		tx, err = e.d.pool.Begin(ctx)
	}
	if err != nil {
		return fmt.Errorf("begin: %w", translate(err))
	}
	// After Commit this is a no-op; on a canceled ctx pgx closes the
	// connection, which rolls back just the same.
	defer tx.Rollback(ctx) //nolint:errcheck
	if err := fn(&executor{d: e.d, q: tx, tx: tx}); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", translate(err))
	}
	return nil
}
