package spine_test

import (
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
)

// TestFailRule: a failure retries while attempts are left, within the
// backoff range; the last attempt finishes; a cancel mark always finishes.
func TestFailRule(t *testing.T) {
	policy := spine.RetryPolicy{MaxAttempts: 3, Backoff: time.Second, Factor: 2}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		attempt  int
		canceled bool
		retry    bool
	}{
		{1, false, true},
		{2, false, true},
		{3, false, false},
		{4, false, false},
		{1, true, false},
		{3, true, false},
	} {
		at, retry := spine.FailRule(policy, c.attempt, c.canceled, now)
		if retry != c.retry {
			t.Fatalf("attempt %d of 3, canceled %v: retry %v, want %v", c.attempt, c.canceled, retry, c.retry)
		}
		if !retry {
			if !at.IsZero() {
				t.Fatalf("attempt %d, canceled %v: no retry but a retry time %v", c.attempt, c.canceled, at)
			}
			continue
		}
		lo, hi := spine.RetryDelayRange(policy, c.attempt)
		if d := at.Sub(now); d < lo || d > hi {
			t.Fatalf("attempt %d: retry after %v, want within [%v, %v]", c.attempt, d, lo, hi)
		}
	}
}
