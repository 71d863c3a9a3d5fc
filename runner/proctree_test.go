package runner

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// TestProcessTreeIsKilled runs a job that leaves a plain child, a setsid
// child and a double-forked daemon (and, trapped, ignores SIGTERM), then
// cancels it or lets it time out: within grace + 1 s no process carrying
// the job's marker is left, and the outcome says what happened.
func TestProcessTreeIsKilled(t *testing.T) {
	t.Parallel()
	const grace = 500 * time.Millisecond
	h := setup(t, harnessOpts{cfg: func(c *Config) { c.KillGrace = grace }})
	h.putFixture("tree", "c-tree", nil)
	for _, tc := range []struct {
		name, action string
		timeout      time.Duration
	}{
		{"cancel", "run", time.Minute},
		{"cancel trapped", "trap", time.Minute},
		{"timeout", "run", 2 * time.Second},
		{"timeout trapped", "trap", 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			id := h.enqueue(job{commit: "c-tree", entry: "spawn.sh", runtime: "command", action: tc.action, timeout: tc.timeout})
			marks := newJobTree(id)
			t.Cleanup(func() { marks.signal(syscall.SIGKILL) })
			h.waitLogs(id, "started", 30*time.Second)
			waitMembers(t, marks, 4)
			var stopAt time.Time
			if tc.timeout == time.Minute {
				stopAt = time.Now()
				cancelJob(t, h, id)
			} else {
				j, err := h.store.GetJob(context.Background(), "ws", id)
				if err != nil || j.StartedAt == nil {
					t.Fatalf("job: %+v %v", j, err)
				}
				stopAt = j.StartedAt.Add(tc.timeout)
			}
			assertTreeGone(t, marks, stopAt.Add(grace+time.Second))
			j := h.wait(id, 10*time.Second)
			if tc.timeout == time.Minute && j.Status != spine.StatusCanceled {
				t.Errorf("status %s after cancel, want canceled", j.Status)
			}
			if tc.timeout != time.Minute && (j.Status != spine.StatusFailure || j.Error == nil ||
				!strings.Contains(j.Error.Message, "timed out after 2s")) {
				t.Errorf("after timeout: status %s error %+v, want failure \"timed out after 2s\"", j.Status, j.Error)
			}
		})
	}
}

func cancelJob(t *testing.T, h *harness, id uuid.UUID) {
	t.Helper()
	if _, err := h.store.Cancel(context.Background(), spine.CancelParams{Workspace: "ws", JobID: id, By: "test", Reason: "test"}); err != nil {
		t.Fatal(err)
	}
}

// waitMembers polls until the tree has at least n live processes.
func waitMembers(t *testing.T, m jobTree, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(m.members()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("job tree has %d processes, want at least %d", len(m.members()), n)
		}
		time.Sleep(10 * time.Millisecond) // polling /proc
	}
}

// assertTreeGone polls until no process of the tree is left, failing past
// the deadline.
func assertTreeGone(t *testing.T, m jobTree, deadline time.Time) {
	t.Helper()
	for {
		left := m.members()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of the job still alive past the deadline: %v", describe(left))
		}
		time.Sleep(10 * time.Millisecond) // polling /proc
	}
}

func describe(pids []int) []string {
	out := make([]string, 0, len(pids))
	for _, pid := range pids {
		out = append(out, procCmdline(pid))
	}
	return out
}

// TestShutdownReleasesRunningJob: stopping the worker lets the job run for
// the drain grace, then kills its tree and releases it to the queue
// without charging an attempt.
func TestShutdownReleasesRunningJob(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOpts{})
	h.putFixture("tree", "c-tree", nil)
	id := h.enqueue(job{commit: "c-tree", entry: "spawn.sh", runtime: "command", action: "run"})
	marks := newJobTree(id)
	t.Cleanup(func() { marks.signal(syscall.SIGKILL) })
	h.waitLogs(id, "started", 30*time.Second)
	h.worker.Stop()
	if left := marks.members(); len(left) > 0 {
		t.Fatalf("processes left after Stop: %v", describe(left))
	}
	j, err := h.store.GetJob(context.Background(), "ws", id)
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != spine.StatusQueued || j.Attempt != 1 {
		t.Fatalf("after shutdown: status %s attempt %d, want queued attempt 1", j.Status, j.Attempt)
	}
}

// TestLeftoverChildDoesNotHangJob: a job that exits leaving a child that
// holds its stdout completes at once, and the child is stopped.
func TestLeftoverChildDoesNotHangJob(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOpts{})
	h.putFixture("tree", "c-leave", nil)
	start := time.Now()
	id := h.enqueue(job{commit: "c-leave", entry: "spawn.sh", runtime: "command", action: "leave"})
	marks := newJobTree(id)
	t.Cleanup(func() { marks.signal(syscall.SIGKILL) })
	j := h.wait(id, 20*time.Second)
	if j.Status != spine.StatusSuccess {
		t.Fatalf("status %s %+v", j.Status, j.Error)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("job took %s: the child holding stdout delayed it", took)
	}
	if left := marks.members(); len(left) > 0 {
		t.Fatalf("leftover processes: %v", describe(left))
	}
}
