package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/windforce/windforce/spine"
)

// A rolled-back WithTx leaves no row and wakes nobody.
func TestWithTxRollback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	ch, stop := s.Subscribe([]string{"default"})
	defer stop()

	boom := errors.New("boom")
	var id string
	err := s.WithTx(ctx, func(tx *sql.Tx) error {
		res, err := s.EnqueueTx(ctx, tx, job("default"))
		if err != nil {
			return err
		}
		id = res.ID.String()
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WithTx: %v, want the callback's error", err)
	}
	if n := count(t, s, "SELECT count(*) FROM job WHERE id = ?", id); n != 0 {
		t.Fatalf("rolled-back job row exists (%d)", n)
	}
	if n := count(t, s, "SELECT count(*) FROM job_queue"); n != 0 {
		t.Fatalf("rolled-back queue row exists (%d)", n)
	}
	if woken(ch) {
		t.Fatal("a rolled-back enqueue sent a wake-up")
	}
}

// A committed WithTx wakes the tag once, after the commit, not before.
func TestWithTxWakesAfterCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	ch, stop := s.Subscribe([]string{"default"})
	defer stop()

	err := s.WithTx(ctx, func(tx *sql.Tx) error {
		for range 3 {
			if _, err := s.EnqueueTx(ctx, tx, job("default")); err != nil {
				return err
			}
		}
		if woken(ch) {
			t.Error("wake-up sent before the commit")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("WithTx: %v", err)
	}
	if !woken(ch) {
		t.Fatal("no wake-up after the commit")
	}
	if n := count(t, s, "SELECT count(*) FROM job_queue"); n != 3 {
		t.Fatalf("%d queue rows, want 3", n)
	}
}

// A panic in WithTx rolls back and releases the writer connection.
func TestWithTxPanic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("panic swallowed")
			}
		}()
		_ = s.WithTx(ctx, func(tx *sql.Tx) error {
			if _, err := s.EnqueueTx(ctx, tx, job("default")); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	if n := count(t, s, "SELECT count(*) FROM job_queue"); n != 0 {
		t.Fatalf("%d queue rows after a panic, want 0", n)
	}
	enqueue(t, s, job("default")) // the writer is free again
}

// In a transaction the store did not make, EnqueueTx wakes at once (the
// store cannot see the commit; polling covers the gap).
func TestEnqueueTxForeignTx(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	ch, stop := s.Subscribe([]string{"default"})
	defer stop()

	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	res, err := s.EnqueueTx(ctx, tx, job("default"))
	if err != nil {
		_ = tx.Rollback()
		t.Fatalf("EnqueueTx: %v", err)
	}
	if !woken(ch) {
		t.Error("no immediate wake-up for a foreign transaction")
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if _, err := s.GetJob(ctx, "ws", res.ID); err != nil {
		t.Fatalf("GetJob after commit: %v", err)
	}
}

// An invalid request in EnqueueBatch writes nothing; a duplicate id is a
// conflict and rolls the whole batch back.
func TestEnqueueBatchAllOrNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	first := enqueue(t, s, job("default"))

	dup := job("default")
	dup.ID = first.ID
	_, err := s.EnqueueBatch(ctx, []spine.EnqueueParams{job("default"), dup})
	if !errors.Is(err, spine.ErrConflict) {
		t.Fatalf("batch with a duplicate id: %v, want ErrConflict", err)
	}
	if n := count(t, s, "SELECT count(*) FROM job"); n != 1 {
		t.Fatalf("%d job rows after a failed batch, want 1", n)
	}
}
