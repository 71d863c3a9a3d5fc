package store

import (
	"errors"
	"testing"

	"github.com/windforce/windforce/spine"
)

// TestEventsAfterLimit: a limit out of range is refused before any read.
func TestEventsAfterLimit(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		for _, limit := range []int{0, -1, MaxEventsLimit + 1} {
			if _, err := s.EventsAfter(t.Context(), "", 0, limit); !errors.Is(err, spine.ErrInvalid) {
				t.Errorf("limit %d: %v, want ErrInvalid", limit, err)
			}
		}
		evs, err := s.EventsAfter(t.Context(), "ws", 0, 10)
		if err != nil || len(evs) != 0 {
			t.Fatalf("empty outbox: %v, %v", evs, err)
		}
	})
}
