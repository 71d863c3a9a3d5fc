package sqlite

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// TestSavepointRollbackDropsWakeups: a job inserted in a savepoint that
// rolls back wakes no worker when the outer transaction commits (the
// wake-ups are sent in-process right after the commit, so one would be in
// the channel by the time Tx returns).
func TestSavepointRollbackDropsWakeups(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	ch, stop := s.Subscribe([]string{"sp"})
	defer stop()
	p, err := spine.PrepareEnqueue(job("sp"), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	undo := errors.New("undo")
	err = s.Executor().Tx(ctx, func(ex driver.Executor) error {
		err := ex.Tx(ctx, func(ex driver.Executor) error {
			if _, _, err := ex.EnqueueInsert(ctx, p, true); err != nil {
				return err
			}
			return undo
		})
		if !errors.Is(err, undo) {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
		t.Fatal("a worker was woken for a job the savepoint rolled back")
	default:
	}
	if _, err := s.Executor().GetJob(ctx, "ws", p.ID); !errors.Is(err, spine.ErrNotFound) {
		t.Fatalf("job of the rolled-back savepoint: %v, want not found", err)
	}
}
