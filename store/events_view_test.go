package store

import (
	"errors"
	"testing"

	"github.com/windforce/windforce/spine"
)

// TestRecentEventsLimit: a limit out of range is refused before any read;
// an empty outbox answers none.
func TestRecentEventsLimit(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		for _, limit := range []int{0, -1, MaxRecentEvents + 1} {
			if _, err := s.RecentEvents(t.Context(), "ws", limit); !errors.Is(err, spine.ErrInvalid) {
				t.Errorf("limit %d: %v, want ErrInvalid", limit, err)
			}
		}
		evs, err := s.RecentEvents(t.Context(), "ws", 10)
		if err != nil || len(evs) != 0 {
			t.Fatalf("empty outbox: %v, %v", evs, err)
		}
	})
}
