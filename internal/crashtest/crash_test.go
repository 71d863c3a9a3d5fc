package crashtest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

func enqueueN(t *testing.T, s spine.Store, n int) []uuid.UUID {
	t.Helper()
	ids := make([]uuid.UUID, n)
	for i := range ids {
		res, err := s.Enqueue(context.Background(), spine.EnqueueParams{Workspace: "ws", TriggerKind: spine.TriggerAPI,
			Input: json.RawMessage(`{}`), Pin: spine.Pin{AppKey: "crash", ActionKey: "run", Tag: "crash"}})
		if err != nil {
			t.Fatalf("enqueue: %v", err)
		}
		ids[i] = res.ID
	}
	return ids
}

func getJob(t *testing.T, s spine.Store, id uuid.UUID) spine.Job {
	t.Helper()
	job, err := s.GetJob(context.Background(), "ws", id)
	if err != nil {
		t.Fatalf("get job %s: %v", id, err)
	}
	return job
}

// TestSIGKILLedWorkerJobsAreRequeuedAndRunOnceMore: a worker process dies
// with SIGKILL holding 6 jobs. After the zombie timeout the reaper requeues
// them (restarts=1, attempt not charged) and another worker runs each
// exactly once more.
func TestSIGKILLedWorkerJobsAreRequeuedAndRunOnceMore(t *testing.T) {
	for name, newTarget := range targets(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tg := newTarget(t)
			s := tg.openT(t)
			ids := enqueueN(t, s, 6)
			h := startHelper(t, tg, "block-worker")
			for range ids {
				h.line(t, "started ")
			}
			h.kill(t)
			killedAt := time.Now()
			for _, id := range ids {
				if job := getJob(t, s, id); job.Status != spine.StatusRunning || job.Worker != "doomed" {
					t.Fatalf("after SIGKILL job %s is %s by %q, want running by doomed", id, job.Status, job.Worker)
				}
			}
			// Before the zombie timeout nothing is reaped.
			res, err := s.Reap(context.Background(), spine.ReapParams{Now: killedAt.Add(30 * time.Second), ZombieTimeout: time.Minute, RestartLimit: 3})
			if err != nil || len(res.Requeued)+len(res.Failed)+len(res.Canceled) != 0 {
				t.Fatalf("reap before the timeout = %+v, %v; want nothing", res, err)
			}
			later := killedAt.Add(61 * time.Second)
			res, err = s.Reap(context.Background(), spine.ReapParams{Now: later, ZombieTimeout: time.Minute, RestartLimit: 3})
			if err != nil || len(res.Requeued) != len(ids) {
				t.Fatalf("reap after the timeout = %+v, %v; want %d requeued", res, err, len(ids))
			}
			runs := runToCompletion(t, s, ids, offsetClock(later))
			for _, id := range ids {
				job := getJob(t, s, id)
				if runs[id] != 1 || job.Status != spine.StatusSuccess || job.Restarts != 1 || job.Attempt != 1 {
					t.Errorf("job %s: ran %d times more, %s, restarts %d, attempt %d; want once, success, 1, 1",
						id, runs[id], job.Status, job.Restarts, job.Attempt)
				}
			}
		})
	}
}

// runToCompletion runs a worker until every id is finished and returns how
// often the handler ran each.
func runToCompletion(t *testing.T, s spine.Store, ids []uuid.UUID, clock spine.Clock) map[uuid.UUID]int {
	t.Helper()
	var mu sync.Mutex
	runs := map[uuid.UUID]int{}
	w, err := spine.NewWorker(spine.WorkerConfig{Store: s, Name: "survivor", Tags: []string{"crash"}, Concurrency: 4,
		PollInterval: 20 * time.Millisecond, Clock: clock,
		Handler: func(ctx context.Context, job *spine.ClaimedJob) (json.RawMessage, error) {
			mu.Lock()
			runs[job.ID]++
			mu.Unlock()
			return json.RawMessage(`{"by":"survivor"}`), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	deadline := time.Now().Add(30 * time.Second)
	for _, id := range ids {
		for !getJob(t, s, id).Status.Terminal() {
			if time.Now().After(deadline) {
				t.Fatalf("job %s not finished within 30s", id)
			}
			time.Sleep(10 * time.Millisecond) // polling with a deadline
		}
	}
	w.Stop()
	mu.Lock()
	defer mu.Unlock()
	return runs
}

// offsetClock is a fake clock running from start at the real pace, for a
// worker that must agree with a reaper run at a fake time.
func offsetClock(start time.Time) spine.Clock {
	begin := time.Now()
	return func() time.Time { return start.Add(time.Since(begin)) }
}

// TestSIGSTOPpedWorkerCannotCompleteAfterResume: a worker frozen past the
// zombie timeout loses its job to another worker; when it resumes, its
// heartbeat finds nothing and its completion is refused (not owner), and
// the other worker's result stands.
func TestSIGSTOPpedWorkerCannotCompleteAfterResume(t *testing.T) {
	for name, newTarget := range targets(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tg := newTarget(t)
			s := tg.openT(t)
			go4 := filepath.Join(t.TempDir(), "go")
			ids := enqueueN(t, s, 1)
			h := startHelper(t, tg, "claim-wait-complete", envFile+"="+go4)
			if got := parseID(t, h.line(t, "claimed ")); got != ids[0] {
				t.Fatalf("helper claimed %s, want %s", got, ids[0])
			}
			if err := h.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			later := time.Now().Add(2 * time.Minute)
			res, err := s.Reap(context.Background(), spine.ReapParams{Now: later, ZombieTimeout: time.Minute, RestartLimit: 3})
			if err != nil || len(res.Requeued) != 1 {
				t.Fatalf("reap = %+v, %v; want the frozen worker's job requeued", res, err)
			}
			runToCompletion(t, s, ids, offsetClock(later))
			if err := os.WriteFile(go4, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := h.cmd.Process.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			if hb := h.line(t, "heartbeat "); !strings.HasPrefix(hb, "owned=0 err=<nil>") {
				t.Fatalf("resumed worker's heartbeat: %s; want owned=0", hb)
			}
			if c := h.line(t, "complete "); !strings.Contains(c, spine.ErrNotOwner.Error()) {
				t.Fatalf("resumed worker's completion: %s; want not owner", c)
			}
			job := getJob(t, s, ids[0])
			if job.Status != spine.StatusSuccess || job.Worker != "survivor" || !strings.Contains(string(job.Result), "survivor") {
				t.Fatalf("job is %s by %q with %s; want the survivor's success", job.Status, job.Worker, job.Result)
			}
		})
	}
}
