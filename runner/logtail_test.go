package runner

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
)

// errAppend is a database hiccup on AppendLog (not a lost lease).
var errAppend = errors.New("injected: connection refused")

// failingAppends is the store as the runner sees it while every AppendLog
// fails; the worker completes jobs on the real store.
type failingAppends struct {
	spine.Store
	calls atomic.Int64
}

func (f *failingAppends) AppendLog(context.Context, spine.AppendLogParams) error {
	f.calls.Add(1)
	return errAppend
}

// TestFailingAppendsLeaveNoSilentSuccess: with every append of a job's
// output failing, a successful job and a failed one still finish with all
// their output in their logs: what could not be appended is the tail, and
// the tail is written in the outcome's transaction. (Before, the final
// chunk's failed append was dropped and the job showed success with its
// logs missing.)
func TestFailingAppendsLeaveNoSilentSuccess(t *testing.T) {
	t.Parallel()
	appends := &failingAppends{}
	h := setup(t, harnessOpts{cfg: func(c *Config) { appends.Store = c.Store; c.Store = appends }})
	h.putFixture("apps/command", "c-tail", nil)
	ok := h.enqueue(job{commit: "c-tail", entry: "run.sh", runtime: "command", action: "echo", input: "1"})
	failed := h.enqueue(job{commit: "c-tail", entry: "run.sh", runtime: "command", action: "throw",
		retry: spine.RetryPolicy{MaxAttempts: 1}})
	if j := h.wait(ok, 30*time.Second); j.Status != spine.StatusSuccess {
		t.Fatalf("echo job: %s %+v; logs:\n%s", j.Status, j.Error, h.logs(ok))
	}
	assertInOrder(t, h.logs(ok), []string{"out-1", "out-3"})
	if logs := h.logs(ok); !strings.Contains(logs, "err-2") {
		t.Errorf("echo job's logs lack its stderr: %q", logs)
	}
	if j := h.wait(failed, 30*time.Second); j.Status != spine.StatusFailure {
		t.Fatalf("throw job: %s %+v", j.Status, j.Error)
	}
	assertInOrder(t, h.logs(failed), []string{"boom from command", "[windforce] error:"})
}

// flakyLogs fails the first fails appends with a hiccup, then stores.
type flakyLogs struct {
	memLogs
	fails int
	err   error
}

func (f *flakyLogs) AppendLog(ctx context.Context, p spine.AppendLogParams) error {
	f.mu.Lock()
	if f.fails > 0 {
		f.fails--
		f.mu.Unlock()
		return f.err
	}
	f.mu.Unlock()
	return f.memLogs.AppendLog(ctx, p)
}

// TestLogSinkKeepsWhatFailedToAppend: a chunk whose append fails is kept
// and goes out with the next one, or with the tail; a lost lease drops
// the rest (nothing more is written for the job).
func TestLogSinkKeepsWhatFailedToAppend(t *testing.T) {
	t.Parallel()
	token := "wf1.secret.sig"
	store := &flakyLogs{fails: 2, err: errAppend}
	cfg := Config{Store: store, LogFlushInterval: time.Hour}
	fillDefaults(&cfg)
	sink := newLogSink(cfg, spine.Lease{}, newMasker(token, nil))
	_, _ = sink.Write([]byte("one " + token + "\n"))
	sink.flush() // fails
	_, _ = sink.Write([]byte("two\n"))
	sink.flush() // fails
	_, _ = sink.Write([]byte("three\n"))
	sink.flush() // lands, with what failed before
	if got := store.text(); got != "one [WF_TOKEN]\ntwo\nthree\n" {
		t.Fatalf("stored %q after two failed appends", got)
	}
	_, _ = sink.Write([]byte("four\n"))
	store.fails = 1
	sink.flush() // fails: "four" is the tail
	_, _ = sink.Write([]byte("five " + token))
	if tail := sink.Close(); tail != "four\nfive [WF_TOKEN]" {
		t.Fatalf("tail %q", tail)
	}
	if again := sink.Close(); again != "four\nfive [WF_TOKEN]" {
		t.Fatalf("second Close: %q", again)
	}

	lost := &flakyLogs{fails: 1, err: spine.ErrNotOwner}
	cfg.Store = lost
	sink = newLogSink(cfg, spine.Lease{}, nil)
	_, _ = sink.Write([]byte("before the reap\n"))
	sink.flush()
	_, _ = sink.Write([]byte("after\n"))
	sink.flush()
	if tail := sink.Close(); tail != "" || lost.text() != "" {
		t.Fatalf("lost lease: tail %q, stored %q; want nothing", tail, lost.text())
	}
}
