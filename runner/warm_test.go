package runner

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// warmFixtures are the runtimes with warm processes.
var warmFixtures = fixtures[:3]

// setupWarm is a harness whose jobs run warm with policy, one commit of
// every warm runtime's fixture put as c-<runtime>.
func setupWarm(t *testing.T, policy spine.Warm, cfg func(*Config)) *harness {
	t.Helper()
	requireBun(t)
	h := setup(t, harnessOpts{concurrency: 4, warm: &policy, cfg: func(c *Config) {
		c.WarmProcesses = 4 // the worker's slots, as the CLI sets it
		if cfg != nil {
			cfg(c)
		}
	}})
	for _, f := range warmFixtures {
		h.putFixture(f.dir, "c-"+f.runtime, nil)
	}
	return h
}

// run enqueues one job of f's fixture and waits for it.
func (h *harness) run(f runtimeFixture, commit, action, input string) spine.Job {
	h.t.Helper()
	return h.wait(h.enqueue(f.job(commit, action, input)), 60*time.Second)
}

// job is a job of f's fixture, its runtime's app (one app per runtime: a
// newer commit of an app retires the older commit's processes).
func (f runtimeFixture) job(commit, action, input string) job {
	return job{app: f.runtime, commit: commit, entry: f.entry, runtime: f.runtime, action: action, input: input}
}

// count is the "count" action's answer: the process's job count and pid
// (in its namespace).
type count struct {
	Runs int `json:"runs"`
	Pid  int `json:"pid"`
}

func (h *harness) count(f runtimeFixture, commit string) count {
	h.t.Helper()
	j := h.run(f, commit, "count", "")
	var c count
	if j.Status != spine.StatusSuccess || json.Unmarshal(j.Result, &c) != nil {
		h.t.Fatalf("count: %s %s %+v; logs:\n%s", j.Status, j.Result, j.Error, h.logs(j.ID))
	}
	return c
}

// warmPids are the host pids of the pool's processes of app.
func (h *harness) warmPids(app string) []int {
	var pids []int
	for _, p := range h.runner.WarmStats().Each {
		if p.App == app && p.Pid > 0 {
			pids = append(pids, p.Pid)
		}
	}
	slices.Sort(pids)
	return pids
}

// TestWarmReusesOneProcess: jobs back to back are served by one process
// that imported the entrypoint once (module state counts them).
func TestWarmReusesOneProcess(t *testing.T) {
	t.Parallel()
	h := setupWarm(t, spine.DefaultWarm, nil)
	for _, f := range warmFixtures {
		t.Run(f.runtime, func(t *testing.T) {
			for want := 1; want <= 3; want++ {
				if c := h.count(f, "c-"+f.runtime); c.Runs != want {
					t.Fatalf("job %d ran as the process's job %d", want, c.Runs)
				}
			}
		})
	}
	st := h.runner.WarmStats()
	if st.Processes != len(warmFixtures) || st.Busy != 0 || st.Memory <= 0 {
		t.Errorf("stats %+v, want %d idle processes with memory", st, len(warmFixtures))
	}
	for _, p := range st.Each {
		if p.Pid <= 0 || p.Jobs != 3 || p.IdleMemory <= 0 {
			t.Errorf("process %+v: want a pid, 3 jobs and its idle memory", p)
		}
	}
}

// TestWarmConformance runs the entry-contract table on warm processes:
// result, thrown error with stack, exit, output schema, oversized result,
// capped logs, read-only commit, masked token.
func TestWarmConformance(t *testing.T) {
	t.Parallel()
	h := setupWarm(t, spine.DefaultWarm, func(c *Config) {
		c.MaxResultBytes = 4096
		c.MaxLogBytes = testMaxLog
	})
	for _, f := range warmFixtures {
		t.Run(f.runtime, func(t *testing.T) {
			t.Parallel()
			// One after another: the cases share processes.
			for _, tc := range conformanceCases {
				t.Run(tc.name, func(t *testing.T) { runConformance(t, h, f, tc) })
			}
			j := h.run(f, "c-"+f.runtime, "throw", "")
			if j.Error == nil || !strings.Contains(j.Error.Stack, "boom from") || !strings.Contains(h.logs(j.ID), "boom from") {
				t.Errorf("thrown error without its stack: %+v", j.Error)
			}
		})
	}
}

// TestWarmLogsBackToBack: output written right before the answer is the
// job's, never the next one's.
func TestWarmLogsBackToBack(t *testing.T) {
	t.Parallel()
	h := setupWarm(t, spine.DefaultWarm, nil)
	for _, f := range warmFixtures {
		t.Run(f.runtime, func(t *testing.T) {
			t.Parallel()
			var ids []uuid.UUID
			for i := range 6 {
				ids = append(ids, h.run(f, "c-"+f.runtime, "late", fmt.Sprintf(`{"n":300,"tag":"j%d"}`, i)).ID)
			}
			for i, id := range ids {
				logs := h.logs(id)
				want := fmt.Sprintf("late-j%d-", i)
				if n := strings.Count(logs, want); n != 300 {
					t.Errorf("job %d has %d of its 300 lines", i, n)
				}
				if strings.Count(logs, "late-") != 300 || strings.Contains(logs, "wf-fence") {
					t.Errorf("job %d's logs hold another job's lines or a fence:\n%.500s", i, logs)
				}
			}
		})
	}
}

// TestWarmEnvPerJob: a job's WF_TOKEN, job id and the env it set are gone
// when the next job runs in the same process.
func TestWarmEnvPerJob(t *testing.T) {
	t.Parallel()
	h := setupWarm(t, spine.DefaultWarm, nil)
	for _, f := range warmFixtures {
		t.Run(f.runtime, func(t *testing.T) {
			t.Parallel()
			commit := "c-" + f.runtime
			first := h.count(f, commit)
			if j := h.run(f, commit, "setenv", `{"value":"from job 1"}`); j.Status != spine.StatusSuccess {
				t.Fatalf("setenv: %s %+v", j.Status, j.Error)
			}
			j := h.run(f, commit, "getenv", "")
			var env struct{ Token, Job, Leak *string }
			if err := json.Unmarshal(j.Result, &env); err != nil {
				t.Fatalf("getenv: %s %+v", j.Result, j.Error)
			}
			if env.Leak != nil || env.Job == nil || *env.Job != j.ID.String() || env.Token == nil || *env.Token != "[WF_TOKEN]" {
				t.Errorf("job 2 sees env %+v; want its own id and token, no LEAK", env)
			}
			if c := h.count(f, commit); c.Runs != first.Runs+1 {
				t.Errorf("the jobs did not share a process: %+v then %+v", first, c)
			}
		})
	}
}

// warmDirs are the directories of the pool's busy processes (the attack
// suite's victims).
func (r *Runner) warmDirs() []string {
	r.warm.mu.Lock()
	defer r.warm.mu.Unlock()
	var dirs []string
	for wp := range r.warm.procs {
		if wp.busy && wp.main > 0 {
			dirs = append(dirs, wp.dir)
		}
	}
	return dirs
}

// TestWarmFilesPerJob: files a job leaves in /tmp and HOME are gone when
// the next job runs in the same process.
func TestWarmFilesPerJob(t *testing.T) {
	t.Parallel()
	h := setupWarm(t, spine.DefaultWarm, nil)
	for _, f := range warmFixtures {
		t.Run(f.runtime, func(t *testing.T) {
			t.Parallel()
			commit := "c-" + f.runtime
			first := h.count(f, commit)
			for i := range 2 {
				j := h.run(f, commit, "mark", "")
				if j.Status != spine.StatusSuccess || !jsonEqual(t, j.Result, `{"found":[]}`) {
					t.Errorf("job %d: %s %s %+v", i, j.Status, j.Result, j.Error)
				}
			}
			if c := h.count(f, commit); c.Runs != first.Runs+1 {
				t.Errorf("the jobs did not share a process: %+v then %+v", first, c)
			}
		})
	}
}

// TestWarmNextJobWaitsForTheFinishingProcess: a process is taken back
// (its files cleared, its memory read) after its job is answered; a job
// of its key arriving meanwhile waits for it instead of starting a
// second process.
func TestWarmNextJobWaitsForTheFinishingProcess(t *testing.T) {
	t.Parallel()
	h := setupWarm(t, spine.DefaultWarm, nil)
	f := warmFixtures[0]
	pl := h.runner.warm
	release := make(chan struct{})
	unblock := sync.OnceFunc(func() { close(release) })
	t.Cleanup(unblock) // before the runner's Close, which waits for the finish
	pl.mu.Lock()
	pl.beforeDone = func() { <-release }
	pl.mu.Unlock()
	first := h.waitFor(h.enqueue(f.job("c-bun", "count", "")), time.Minute, func(j spine.Job) bool { return j.Status.Terminal() })
	if first.Status != spine.StatusSuccess {
		t.Fatalf("first job: %s %+v", first.Status, first.Error)
	}
	second := h.enqueue(f.job("c-bun", "count", ""))
	deadline := time.Now().Add(time.Minute)
	for {
		pl.mu.Lock()
		waiting, procs := pl.waiting, len(pl.procs)
		pl.mu.Unlock()
		if procs != 1 {
			t.Fatalf("the pool holds %d processes while the first finishes, want 1", procs)
		}
		if waiting == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second job never waited for the finishing process")
		}
		time.Sleep(5 * time.Millisecond) // polling the pool
	}
	pl.mu.Lock()
	pl.beforeDone = nil
	pl.mu.Unlock()
	unblock()
	j := h.wait(second, time.Minute)
	var c count
	if j.Status != spine.StatusSuccess || json.Unmarshal(j.Result, &c) != nil || c.Runs != 2 {
		t.Fatalf("second job: %s %s %+v, want its process's 2nd run", j.Status, j.Result, j.Error)
	}
}
