package console

import (
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
)

func TestCommitURL(t *testing.T) {
	t.Parallel()
	const sha = "0123456789abcdef"
	cases := map[string]string{
		"https://github.com/acme/jobs.git":     "https://github.com/acme/jobs/commit/" + sha,
		"https://github.com/acme/jobs":         "https://github.com/acme/jobs/commit/" + sha,
		"https://gitlab.example.com/a/b/c.git": "https://gitlab.example.com/a/b/c/-/commit/" + sha,
		"git@github.com:acme/jobs.git":         "https://github.com/acme/jobs/commit/" + sha,
		"ssh://git@codeberg.org/acme/jobs.git": "https://codeberg.org/acme/jobs/commit/" + sha,
		"ssh://git@internal.host/acme/jobs":    "",
		"git@internal.host:acme/jobs.git":      "",
		"file:///srv/git/jobs.git":             "",
		"https://github.com/":                  "",
	}
	for in, want := range cases {
		if got := commitURL(in, sha); got != want {
			t.Errorf("commitURL(%q) = %q, want %q", in, got, want)
		}
	}
	if got := commitURL("https://github.com/a/b", ""); got != "" {
		t.Errorf("no commit gave %q", got)
	}
}

func TestTimelineOrder(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	started, done := t0.Add(2*time.Second), t0.Add(5*time.Second)
	j := spine.Job{CreatedAt: t0, ScheduledFor: t0, StartedAt: &started, CompletedAt: &done, Status: spine.StatusCanceled,
		Attempt: 1, Restarts: 1, Worker: "w1", CanceledBy: "ops", CanceledReason: "stop", Pin: spine.Pin{Retry: spine.RetryPolicy{MaxAttempts: 1}}}
	ev := timeline(j, []spine.AuditEntry{{Action: "cancel", By: "ops", Reason: "stop", At: t0.Add(3 * time.Second)}},
		func(a string) string { return a })
	var what []string
	for _, e := range ev {
		what = append(what, e.What)
	}
	want := []string{"created", "claimed", "cancel", "finished canceled"}
	if len(what) != len(want) {
		t.Fatalf("timeline %v, want %v", what, want)
	}
	for i := range want {
		if what[i] != want[i] {
			t.Fatalf("timeline %v, want %v", what, want)
		}
	}
	if ev[1].Detail != "by worker w1, attempt 1 of 1, after 1 restart(s) (a worker stopped heartbeating)" {
		t.Fatalf("claimed detail %q", ev[1].Detail)
	}
}
