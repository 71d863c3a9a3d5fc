package store

import (
	"context"
	"database/sql"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
	"github.com/windforce/windforce/store/driver/drivertest"
	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

// callerTx runs fn in a transaction of the caller's own, the way a library
// user enqueues beside its own writes: on Postgres a pgx transaction on
// the pool wrapped by TxExecutor, on SQLite WithTx. It commits when fn
// returns nil and rolls back otherwise, returning fn's error.
func callerTx(t *testing.T, s *Store, fn func(ex driver.Executor) error) error {
	t.Helper()
	ctx := t.Context()
	switch d := s.Driver().(type) {
	case *postgres.Driver:
		tx, err := d.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(context.Background()) //nolint:errcheck
		if err := fn(d.TxExecutor(tx)); err != nil {
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatalf("commit: %v", err)
		}
		return nil
	case *sqlite.Driver:
		return d.WithTx(ctx, func(_ *sql.Tx, ex driver.Executor) error { return fn(ex) })
	}
	t.Fatalf("unknown driver %T", s.Driver())
	return nil
}

// A job enqueued in the caller's transaction exists, and wakes its tag,
// only once that transaction commits.
func TestEnqueueTxWakesOnlyAfterCommit(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		ch, stop := s.Subscribe([]string{"default"})
		defer stop()
		var ids []spine.EnqueueResult
		err := callerTx(t, s, func(ex driver.Executor) error {
			for range 3 {
				res, err := s.EnqueueTx(ctx, ex, pinJob("default"))
				if err != nil {
					return err
				}
				ids = append(ids, res)
			}
			noWake(t, s, ch, "before the caller's transaction committed")
			if _, err := s.GetJob(ctx, "ws", ids[0].ID); !errors.Is(err, spine.ErrNotFound) {
				t.Errorf("the job outside the transaction before the commit: %v, want ErrNotFound", err)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("enqueue in the caller's transaction: %v", err)
		}
		drivertest.WaitWake(t, ch, "after the caller's transaction committed")
		for _, id := range ids {
			if j := mustGetJob(t, s, id); j.Status != spine.StatusQueued {
				t.Fatalf("status = %s, want queued", j.Status)
			}
		}
	})
}

// A rolled-back caller's transaction leaves no row and wakes nobody.
func TestEnqueueTxRolledBackLeavesNothing(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		ch, stop := s.Subscribe([]string{"default"})
		defer stop()
		boom := errors.New("boom")
		var res spine.EnqueueResult
		err := callerTx(t, s, func(ex driver.Executor) error {
			var err error
			if res, err = s.EnqueueTx(t.Context(), ex, pinJob("default")); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("caller's transaction: %v, want the callback's error", err)
		}
		if _, err := s.GetJob(t.Context(), "ws", res.ID); !errors.Is(err, spine.ErrNotFound) {
			t.Fatalf("a rolled-back enqueue left a job: %v", err)
		}
		if n := sqlInt(t, s, "SELECT (SELECT count(*) FROM job) + (SELECT count(*) FROM job_queue)"); n != 0 {
			t.Fatalf("%d rows left after rollback", n)
		}
		noWake(t, s, ch, "for a rolled-back enqueue")
	})
}

// EnqueueActionTx resolves, validates and pins through the caller's
// transaction: a refused input writes nothing, and the job commits with
// the transaction.
func TestEnqueueActionTx(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		s = withGreet(t, s)
		ctx := t.Context()
		req := catalog.EnqueueRequest{Workspace: "ws", App: "hello", Action: "greet", TriggerKind: spine.TriggerAPI,
			CreatedBy: "lib", Input: []byte(`{}`)}
		err := callerTx(t, s, func(ex driver.Executor) error {
			_, err := s.EnqueueActionTx(ctx, ex, req)
			return err
		})
		var inputErr *catalog.InputError
		if !errors.As(err, &inputErr) {
			t.Fatalf("an input the schema refuses: %v, want *catalog.InputError", err)
		}
		req.Input = []byte(`{"name":"ada"}`)
		var res spine.EnqueueResult
		err = callerTx(t, s, func(ex driver.Executor) error {
			res, err = s.EnqueueActionTx(ctx, ex, req)
			return err
		})
		if err != nil {
			t.Fatalf("EnqueueActionTx: %v", err)
		}
		if j := mustGetJob(t, s, res); j.Pin.AppKey != "hello" || j.Pin.Runtime != "bun" || j.CreatedBy != "lib" {
			t.Fatalf("job pinned as %+v", j.Pin)
		}
		if n := jobs(t, s); n != 1 {
			t.Fatalf("%d jobs, want 1", n)
		}
	})
}

// A panic in WithTx rolls back and releases SQLite's one writer.
func TestWithTxPanic(t *testing.T) {
	t.Parallel()
	s := openSQLite(t)
	d := s.Driver().(*sqlite.Driver)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("panic swallowed")
			}
		}()
		_ = d.WithTx(t.Context(), func(_ *sql.Tx, ex driver.Executor) error {
			if _, err := s.EnqueueTx(t.Context(), ex, pinJob("default")); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	if n := sqlInt(t, s, "SELECT count(*) FROM job_queue"); n != 0 {
		t.Fatalf("%d queue rows after a panic, want 0", n)
	}
	mustEnqueue(t, s, pinJob("default")) // the writer is free again
}

// In a SQLite transaction the driver did not make (TxExecutor over one
// begun on DB()), the wake-up goes at once: the driver cannot see the
// commit, and polling covers the gap.
func TestTxExecutorForeignTx(t *testing.T) {
	t.Parallel()
	s := openSQLite(t)
	d := s.Driver().(*sqlite.Driver)
	ctx := t.Context()
	ch, stop := s.Subscribe([]string{"default"})
	defer stop()

	tx, err := d.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	res, err := s.EnqueueTx(ctx, d.TxExecutor(tx), pinJob("default"))
	if err != nil {
		_ = tx.Rollback()
		t.Fatalf("EnqueueTx: %v", err)
	}
	select {
	case <-ch:
	default:
		t.Error("no immediate wake-up for a foreign transaction")
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("commit: %v", err)
	}
	mustGetJob(t, s, res)
}

// EnqueueAction without a coalesce key opens no transaction (on Postgres
// the catalog read and the insert are its two round trips); with one, the
// fold, release and insert share a transaction. Either way a refused input
// writes nothing.
func TestEnqueueActionTransactions(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		s = withGreet(t, s)
		var txs, appends atomic.Int64
		counted := &Store{drv: s.drv, ex: countingEx{s.ex, &txs, &appends}}
		ctx := t.Context()
		req := catalog.EnqueueRequest{Workspace: "ws", App: "hello", Action: "greet", TriggerKind: spine.TriggerAPI,
			CreatedBy: "lib", Input: []byte(`{}`)}
		var inputErr *catalog.InputError
		if _, err := counted.EnqueueAction(ctx, req); !errors.As(err, &inputErr) {
			t.Fatalf("an input the schema refuses: %v, want *catalog.InputError", err)
		}
		req.Input = []byte(`{"name":"ada"}`)
		res, err := counted.EnqueueAction(ctx, req)
		if err != nil {
			t.Fatalf("EnqueueAction: %v", err)
		}
		if txs.Load() != 0 {
			t.Fatalf("EnqueueAction without a coalesce key: %d transactions, want none", txs.Load())
		}
		if j := mustGetJob(t, s, res); j.Pin.AppKey != "hello" || j.Status != spine.StatusQueued {
			t.Fatalf("job %+v", j)
		}
		req.CoalesceKey = "k"
		if _, err := counted.EnqueueAction(ctx, req); err != nil {
			t.Fatalf("EnqueueAction with a coalesce key: %v", err)
		}
		if txs.Load() != 1 {
			t.Fatalf("EnqueueAction with a coalesce key: %d transactions, want 1", txs.Load())
		}
		if n := jobs(t, s); n != 2 {
			t.Fatalf("%d jobs, want 2", n)
		}
	})
}
