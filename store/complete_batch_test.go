package store

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
)

// TestCompleteBatchSameLeaseTwice: a batch naming one lease twice completes
// the job once (the first outcome) and answers the repeat ErrNotOwner, as
// two Complete calls would; the rest of the batch is unaffected.
func TestCompleteBatchSameLeaseTwice(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		now := time.Now()
		queueFill(t, s, "twice", 2, 1, now)
		a := queueClaimOne(t, s, "twice", now)
		b := queueClaimOne(t, s, "twice", now)
		outs, err := s.CompleteBatch(t.Context(), []spine.CompleteParams{
			{Lease: leaseOf(a), Result: json.RawMessage(`{"n":1}`), Now: now},
			{Lease: leaseOf(a), Result: json.RawMessage(`{"n":2}`), Now: now},
			{Lease: leaseOf(b), Result: json.RawMessage(`{"n":3}`), Now: now},
		})
		if err != nil {
			t.Fatal(err)
		}
		if outs[0].Err != nil || outs[0].Status != spine.StatusSuccess {
			t.Fatalf("first naming: %+v, want success", outs[0])
		}
		if !errors.Is(outs[1].Err, spine.ErrNotOwner) {
			t.Fatalf("repeat: %+v, want ErrNotOwner", outs[1])
		}
		if outs[2].Err != nil || outs[2].Status != spine.StatusSuccess {
			t.Fatalf("other job: %+v, want success", outs[2])
		}
		j, err := s.GetJob(t.Context(), "ws", a.ID)
		if err != nil || j.Status != spine.StatusSuccess || string(j.Result) != `{"n": 1}` && string(j.Result) != `{"n":1}` {
			t.Fatalf("job: %s %s, %v; want success with the first result", j.Status, j.Result, err)
		}
	})
}
