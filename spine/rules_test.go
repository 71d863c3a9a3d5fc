package spine_test

import (
	"errors"
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
)

// requireRuleError requires err to be exactly want: nil, a bare sentinel,
// or a sentinel-wrapping error with the exact text.
func requireRuleError(t *testing.T, what string, err error, sentinel error, text string) {
	t.Helper()
	switch {
	case sentinel == nil && err != nil:
		t.Fatalf("%s: %v, want no error", what, err)
	case sentinel == nil:
		return
	case !errors.Is(err, sentinel):
		t.Fatalf("%s: %v, want %v", what, err, sentinel)
	case err.Error() != text:
		t.Fatalf("%s: %q, want %q", what, err, text)
	}
}

// TestCancelRule: a waiting job ends at once, a running one is marked, a
// finished one conflicts naming its status, an unknown one is not found.
func TestCancelRule(t *testing.T) {
	for _, c := range []struct {
		status   spine.Status
		action   spine.CancelAction
		sentinel error
		text     string
	}{
		{spine.StatusQueued, spine.CancelAtOnce, nil, ""},
		{spine.StatusRunning, spine.CancelMark, nil, ""},
		{spine.StatusSuccess, 0, spine.ErrConflict, "job state conflict: cannot cancel a job that already finished with status success"},
		{spine.StatusFailure, 0, spine.ErrConflict, "job state conflict: cannot cancel a job that already finished with status failure"},
		{spine.StatusCanceled, 0, spine.ErrConflict, "job state conflict: cannot cancel a job that already finished with status canceled"},
		{"", 0, spine.ErrNotFound, "job not found"},
	} {
		action, err := spine.CancelRule(c.status)
		requireRuleError(t, "CancelRule("+string(c.status)+")", err, c.sentinel, c.text)
		if action != c.action {
			t.Fatalf("CancelRule(%q) = %d, want %d", c.status, action, c.action)
		}
	}
}

// TestReopenRule: only a failed job, or a canceled one with force, reopens.
func TestReopenRule(t *testing.T) {
	for _, c := range []struct {
		status   spine.Status
		force    bool
		sentinel error
		text     string
	}{
		{spine.StatusFailure, false, nil, ""},
		{spine.StatusFailure, true, nil, ""},
		{spine.StatusCanceled, true, nil, ""},
		{spine.StatusCanceled, false, spine.ErrConflict, "job state conflict: the job was canceled; reopening it needs force"},
		{spine.StatusSuccess, false, spine.ErrConflict, "job state conflict: cannot reopen a job that finished with status success"},
		{spine.StatusSuccess, true, spine.ErrConflict, "job state conflict: cannot reopen a job that finished with status success"},
		{spine.StatusQueued, true, spine.ErrConflict, "job state conflict: cannot reopen a job that is queued"},
		{spine.StatusRunning, false, spine.ErrConflict, "job state conflict: cannot reopen a job that is running"},
		{"", true, spine.ErrNotFound, "job not found"},
	} {
		err := spine.ReopenRule(c.status, c.force)
		requireRuleError(t, "ReopenRule("+string(c.status)+")", err, c.sentinel, c.text)
	}
}

// TestRequeueRule: only a waiting job is requeued.
func TestRequeueRule(t *testing.T) {
	for _, c := range []struct {
		status   spine.Status
		sentinel error
		text     string
	}{
		{spine.StatusQueued, nil, ""},
		{spine.StatusRunning, spine.ErrConflict, "job state conflict: cannot requeue a running job; only a waiting job can be requeued"},
		{spine.StatusSuccess, spine.ErrConflict, "job state conflict: cannot requeue a job that already finished with status success"},
		{spine.StatusCanceled, spine.ErrConflict, "job state conflict: cannot requeue a job that already finished with status canceled"},
		{"", spine.ErrNotFound, "job not found"},
	} {
		err := spine.RequeueRule(c.status)
		requireRuleError(t, "RequeueRule("+string(c.status)+")", err, c.sentinel, c.text)
	}
}

// TestReapRule: a zombie under the restart limit is requeued, one at the
// limit fails with its last ping, and a cancel-marked one ends canceled
// whatever its restarts.
func TestReapRule(t *testing.T) {
	ping := time.Date(2026, 12, 1, 13, 4, 5, 120_000_000, time.FixedZone("CET", 3600))
	for _, c := range []struct {
		name  string
		z     spine.Zombie
		limit int
		want  spine.ReapAction
		err   spine.JobError
	}{
		{"first restart", spine.Zombie{Worker: "w1", Restarts: 0, Ping: &ping}, 3,
			spine.ReapRequeue, spine.JobError{Message: "worker w1 stopped heartbeating; requeued (restart 1 of 3)", Kind: "zombie"}},
		{"last restart", spine.Zombie{Worker: "w1", Restarts: 2, Ping: &ping}, 3,
			spine.ReapRequeue, spine.JobError{Message: "worker w1 stopped heartbeating; requeued (restart 3 of 3)", Kind: "zombie"}},
		{"at the limit", spine.Zombie{Worker: "w1", Restarts: 3, Ping: &ping}, 3,
			spine.ReapFail, spine.JobError{Message: "restart limit 3 reached: worker w1 stopped heartbeating (last ping 2026-12-01T12:04:05.12Z)", Kind: "restart_limit"}},
		{"never pinged", spine.Zombie{Worker: "w2"}, 0,
			spine.ReapFail, spine.JobError{Message: "restart limit 0 reached: worker w2 stopped heartbeating (last ping never)", Kind: "restart_limit"}},
		{"negative limit is none", spine.Zombie{Worker: "w2"}, -1,
			spine.ReapFail, spine.JobError{Message: "restart limit 0 reached: worker w2 stopped heartbeating (last ping never)", Kind: "restart_limit"}},
		{"canceled under the limit", spine.Zombie{Worker: "w1", Canceled: true, Ping: &ping}, 3, spine.ReapCancel, spine.JobError{}},
		{"canceled past the limit", spine.Zombie{Worker: "w1", Canceled: true, Restarts: 9}, 3, spine.ReapCancel, spine.JobError{}},
	} {
		action, jerr := spine.ReapRule(c.z, c.limit)
		if action != c.want || jerr != c.err {
			t.Errorf("%s: ReapRule = %d, %+v; want %d, %+v", c.name, action, jerr, c.want, c.err)
		}
	}
}
