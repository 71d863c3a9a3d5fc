package catalog

import (
	"reflect"
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
)

// TestOverridesRoundTrip: what OverridesOf writes, Apply reads back as the
// same action, for an action that overrides everything and for one that
// overrides nothing (every column NULL).
func TestOverridesRoundTrip(t *testing.T) {
	for _, a := range []Action{
		{Key: "all", Timeout: 1500 * time.Millisecond, Tag: "gpu",
			Retry:  &spine.RetryPolicy{MaxAttempts: 4, Backoff: 3 * time.Second, Factor: 1.5},
			Limits: spine.Limits{Memory: 1 << 30, Pids: 64, CPU: 0.25}},
		{Key: "none"},
	} {
		o := OverridesOf(a)
		got := Action{Key: a.Key}
		o.Apply(&got)
		if !reflect.DeepEqual(got, a) {
			t.Errorf("round trip of %s = %+v, want %+v", a.Key, got, a)
		}
	}
	if o := OverridesOf(Action{}); o != (Overrides{}) {
		t.Errorf("OverridesOf(zero action) = %+v, want every column NULL", o)
	}
}

// TestOverridesPartialRetry: a retry policy with a NULL column is no
// override (the app's policy applies), and Apply clears what the action
// held before.
func TestOverridesPartialRetry(t *testing.T) {
	attempts, backoff := 5, int64(1000)
	a := Action{Timeout: time.Hour, Tag: "old", Retry: &spine.RetryPolicy{MaxAttempts: 9}, Limits: spine.Limits{Pids: 3}}
	Overrides{MaxAttempts: &attempts, BackoffMS: &backoff}.Apply(&a)
	if a.Retry != nil || a.Timeout != 0 || a.Tag != "" || a.Limits != (spine.Limits{}) {
		t.Fatalf("Apply(partial retry) = %+v, want no overrides", a)
	}
}
