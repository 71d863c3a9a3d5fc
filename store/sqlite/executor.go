package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"maps"

	"github.com/windforce/windforce/store/driver"
)

// executor runs the driver's operations: on the pool when w is nil (a
// write opens its own BEGIN IMMEDIATE transaction on the writer, a read
// goes to the reader pool), else inside the write transaction w, where
// reads go through w too so they see its writes.
type executor struct {
	d *Driver
	w *writeTx
	// depth counts the savepoints open on w, to name the next one.
	depth int
}

var _ driver.Driver = (*Driver)(nil)

// Executor runs each operation on the pool.
func (s *Driver) Executor() driver.Executor { return &executor{d: s} }

// Tx runs fn in one write transaction on the writer, or in a savepoint of
// e's transaction. Wake-ups fn queues are sent after the outermost commit.
func (e *executor) Tx(ctx context.Context, fn func(driver.Executor) error) error {
	if e.w == nil {
		return e.d.write(ctx, func(w *writeTx) error { return fn(&executor{d: e.d, w: w}) })
	}
	name := fmt.Sprintf("sp%d", e.depth+1)
	ctx = e.w.ctx(ctx)
	if _, err := e.w.tx.ExecContext(ctx, "SAVEPOINT "+name); err != nil {
		return fmt.Errorf("savepoint: %w", translate(err))
	}
	// The wake-ups queued so far, to put back if the savepoint rolls
	// back: its writes are undone, so must be the wake-ups they queued.
	tags, done := maps.Clone(e.w.tags), len(e.w.done)
	released := false
	defer func() {
		if !released {
			// Undo the savepoint's writes and drop it; the outer
			// transaction goes on.
			_, _ = e.w.tx.ExecContext(ctx, "ROLLBACK TO "+name)
			_, _ = e.w.tx.ExecContext(ctx, "RELEASE "+name)
			e.w.tags, e.w.done = tags, e.w.done[:done]
		}
	}()
	if err := fn(&executor{d: e.d, w: e.w, depth: e.depth + 1}); err != nil {
		return err
	}
	if _, err := e.w.tx.ExecContext(ctx, "RELEASE "+name); err != nil {
		return fmt.Errorf("release savepoint: %w", translate(err))
	}
	released = true
	return nil
}

// write runs fn in e's transaction, or in one of its own on the pool.
func (e *executor) write(ctx context.Context, fn func(w *writeTx) error) error {
	if e.w != nil {
		return fn(e.w)
	}
	return e.d.write(ctx, fn)
}

// writeUnsynced is write whose own transaction's commit is not synced
// (Driver.writeUnsynced); inside e's transaction it is that transaction's.
func (e *executor) writeUnsynced(ctx context.Context, fn func(w *writeTx) error) error {
	if e.w != nil {
		return fn(e.w)
	}
	return e.d.writeUnsynced(ctx, fn)
}

// read runs the read-only statement q: on the reader pool, or through e's
// transaction so it sees that transaction's writes.
func (e *executor) read(ctx context.Context, q query, args ...any) (*sql.Rows, error) {
	if e.w != nil {
		return e.w.query(ctx, q, args...)
	}
	return e.d.readerQuery(ctx, q, args...)
}
