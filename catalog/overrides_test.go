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
			Limits: spine.Limits{Memory: 1 << 30, Pids: 64, CPU: 0.25},
			Env:    []spine.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Secret: "b_token"}, {Name: "EMPTY"}},
			Warm:   &spine.Warm{MaxJobs: 7, Idle: 90 * time.Second}},
		{Key: "cold", Warm: Cold()},
		{Key: "none"},
	} {
		o := OverridesOf(a)
		got := Action{Key: a.Key}
		if err := o.Apply(&got); err != nil {
			t.Fatalf("Apply of %s: %v", a.Key, err)
		}
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
	a := Action{Timeout: time.Hour, Tag: "old", Retry: &spine.RetryPolicy{MaxAttempts: 9}, Limits: spine.Limits{Pids: 3},
		Env: []spine.EnvVar{{Name: "X", Value: "y"}}, Warm: &spine.DefaultWarm}
	if err := (Overrides{MaxAttempts: &attempts, BackoffMS: &backoff}).Apply(&a); err != nil {
		t.Fatal(err)
	}
	if a.Retry != nil || a.Timeout != 0 || a.Tag != "" || a.Limits != (spine.Limits{}) || a.Env != nil || a.Warm != nil {
		t.Fatalf("Apply(partial retry) = %+v, want no overrides", a)
	}
}

// TestOverridesBadColumns: an env or warm column that is not JSON is an
// error naming the action, not an action silently without them.
func TestOverridesBadColumns(t *testing.T) {
	bad := "{"
	for name, o := range map[string]Overrides{"env": {Env: &bad}, "warm": {Warm: &bad}} {
		a := Action{Key: "x"}
		if err := o.Apply(&a); err == nil {
			t.Errorf("Apply with a bad %s column: no error", name)
		}
	}
}

// TestMergeEnvWarm: the action's variables replace the app's of the same
// name and the rest are kept, sorted; the action's warm replaces the
// app's, Cold() makes it cold, nil keeps the app's.
func TestMergeEnvWarm(t *testing.T) {
	app := []spine.EnvVar{{Name: "A", Value: "app"}, {Name: "C", Secret: "c"}}
	action := []spine.EnvVar{{Name: "B", Value: "action"}, {Name: "C", Value: "literal now"}}
	got := MergeEnv(app, action)
	want := []spine.EnvVar{{Name: "A", Value: "app"}, {Name: "B", Value: "action"}, {Name: "C", Value: "literal now"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MergeEnv = %+v, want %+v", got, want)
	}
	if app[1].Secret != "c" || action[0].Name != "B" {
		t.Errorf("MergeEnv changed its inputs: %+v %+v", app, action)
	}
	if got := MergeEnv(nil, nil); got != nil {
		t.Errorf("MergeEnv(nil, nil) = %+v, want nil", got)
	}
	if got := MergeEnv(app, nil); !reflect.DeepEqual(got, app) {
		t.Errorf("MergeEnv(app, nil) = %+v, want the app's", got)
	}
	own := &spine.Warm{MaxJobs: 3, Idle: time.Second}
	for _, c := range []struct {
		name        string
		app, action *spine.Warm
		want        *spine.Warm
	}{
		{"both nil", nil, nil, nil},
		{"app's", &spine.DefaultWarm, nil, &spine.DefaultWarm},
		{"action's over app's", &spine.DefaultWarm, own, own},
		{"action warm, app cold", nil, own, own},
		{"action cold", &spine.DefaultWarm, Cold(), nil},
	} {
		if got := MergeWarm(c.app, c.action); !reflect.DeepEqual(got, c.want) {
			t.Errorf("MergeWarm %s = %+v, want %+v", c.name, got, c.want)
		}
	}
}
