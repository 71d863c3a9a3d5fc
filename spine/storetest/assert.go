package storetest

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// requireErrorIs fails t unless err wraps target.
func requireErrorIs(t *testing.T, err, target error, what string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want one wrapping %q", what, target)
	}
	if !errors.Is(err, target) {
		t.Fatalf("%s: error %q does not wrap %q", what, err, target)
	}
}

// sameTime compares two times at the databases' microsecond precision. A
// difference of one microsecond is allowed because a driver may round
// where Go truncates. Stores return every time in UTC.
func sameTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if got.Location() != time.UTC {
		t.Fatalf("%s: %v is in %v, want UTC", what, got, got.Location())
	}
	if d := got.Sub(want); d > time.Microsecond || d < -time.Microsecond {
		t.Fatalf("%s: got %v, want %v (off by %v)", what, got.UTC(), want.UTC(), d)
	}
}

// sameTimePtr is sameTime for an optional time that must be set.
func sameTimePtr(t *testing.T, what string, got *time.Time, want time.Time) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: nil, want %v", what, want.UTC())
	}
	sameTime(t, what, *got, want)
}

// requireNilTime fails t when an optional time is set.
func requireNilTime(t *testing.T, what string, got *time.Time) {
	t.Helper()
	if got != nil {
		t.Fatalf("%s: %v, want none", what, got.UTC())
	}
}

// inRange requires lo <= got <= hi, with the microsecond slack of sameTime.
func inRange(t *testing.T, what string, got, lo, hi time.Time) {
	t.Helper()
	if got.Before(lo.Add(-time.Microsecond)) || got.After(hi.Add(time.Microsecond)) {
		t.Fatalf("%s: %v is outside [%v, %v]", what, got.UTC(), lo.UTC(), hi.UTC())
	}
}

// jsonEqual compares two JSON documents by meaning: jsonb reorders keys
// and drops whitespace, so bytes may differ. An empty value reads as null.
func jsonEqual(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	if len(got) == 0 {
		got = json.RawMessage("null")
	}
	if len(want) == 0 {
		want = json.RawMessage("null")
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: stored value %q is not JSON: %v", what, got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: expected value %q is not JSON: %v", what, want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s: got %s, want %s", what, got, want)
	}
}

// requirePin compares every field of a pinned execution metadata.
func requirePin(t *testing.T, what string, got, want spine.Pin) {
	t.Helper()
	type field struct {
		name      string
		got, want any
	}
	for _, f := range []field{
		{"GitSourceID", got.GitSourceID, want.GitSourceID},
		{"CommitSHA", got.CommitSHA, want.CommitSHA},
		{"AppKey", got.AppKey, want.AppKey},
		{"ActionKey", got.ActionKey, want.ActionKey},
		{"Entrypoint", got.Entrypoint, want.Entrypoint},
		{"Runtime", got.Runtime, want.Runtime},
		{"Timeout", got.Timeout, want.Timeout},
		{"Tag", got.Tag, want.Tag},
		{"Retry", got.Retry, want.Retry},
		{"Limits", got.Limits, want.Limits},
	} {
		if f.got != f.want {
			t.Fatalf("%s: pin %s = %v, want %v", what, f.name, f.got, f.want)
		}
	}
	if !reflect.DeepEqual(got.Env, want.Env) {
		t.Fatalf("%s: pin Env = %+v, want %+v", what, got.Env, want.Env)
	}
	if !reflect.DeepEqual(got.Warm, want.Warm) {
		t.Fatalf("%s: pin Warm = %+v, want %+v", what, got.Warm, want.Warm)
	}
	jsonEqual(t, what+": pin InputSchema", got.InputSchema, want.InputSchema)
	jsonEqual(t, what+": pin OutputSchema", got.OutputSchema, want.OutputSchema)
}

// requireErrorMessage requires a stored error containing every part.
func requireErrorMessage(t *testing.T, what string, got *spine.JobError, parts ...string) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: no error stored, want one mentioning %q", what, parts)
	}
	for _, p := range parts {
		if !strings.Contains(got.Message, p) {
			t.Fatalf("%s: error message %q does not mention %q", what, got.Message, p)
		}
	}
}

// requireIDs requires got and want to hold the same ids, in any order.
func requireIDs(t *testing.T, what string, got, want []uuid.UUID) {
	t.Helper()
	g := map[uuid.UUID]int{}
	for _, id := range got {
		g[id]++
	}
	w := map[uuid.UUID]int{}
	for _, id := range want {
		w[id]++
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s: got ids %v, want %v", what, got, want)
	}
}

// claimedIDs lists the ids of claimed jobs.
func claimedIDs(jobs []spine.ClaimedJob) []uuid.UUID {
	ids := make([]uuid.UUID, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids
}
