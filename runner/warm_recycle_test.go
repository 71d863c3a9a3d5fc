package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// uniqueSeconds is a sleep length no other process has, to find the
// child from the host by its command line.
func uniqueSeconds() string { return strconv.Itoa(3000 + int(uuid.New().ID()%100000)) }

// assertGone fails unless every pid has exited (zombies count as gone)
// within 10 s.
func assertGone(t *testing.T, what string, pids []int) {
	t.Helper()
	assertGoneBy(t, what, pids, time.Now().Add(10*time.Second))
}

// assertGoneBy fails unless every pid has exited by deadline.
func assertGoneBy(t *testing.T, what string, pids []int, deadline time.Time) {
	t.Helper()
	for {
		var left []string
		for _, pid := range pids {
			if alive(pid) {
				left = append(left, procCmdline(pid))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: processes left: %v", what, left)
		}
		time.Sleep(20 * time.Millisecond) // polling /proc: no event for another process's end
	}
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	return !strings.Contains(string(readStat(pid)), ") Z ")
}

func readStat(pid int) []byte {
	data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return data
}

// stopped runs a "spawn" job (its runtime waits on a child sleep), stops
// it with stop once the child runs, and asserts the job ended with want,
// that the warm process and the child are gone, and that the next job
// gets a fresh process.
func stopped(t *testing.T, h *harness, f runtimeFixture, timeout time.Duration, stop func(uuid.UUID), want spine.Status) {
	commit := "c-" + f.runtime
	if c := h.count(f, commit); c.Runs < 1 {
		t.Fatal("no warm process")
	}
	before := h.warmPids(f.runtime)
	secs := uniqueSeconds()
	j := f.job(commit, "spawn", `{"seconds":`+secs+`}`)
	j.timeout = timeout
	id := h.enqueue(j)
	h.waitLogs(id, "started", 30*time.Second)
	child := hostPids(func(pid int) bool { return strings.HasSuffix(procCmdline(pid), ":sleep "+secs) })
	if len(child) != 1 || len(before) != 1 {
		t.Fatalf("child %v, warm processes %v", child, before)
	}
	stop(id)
	if got := h.wait(id, 30*time.Second); got.Status != want {
		t.Fatalf("job %s %+v, want %s", got.Status, got.Error, want)
	}
	assertGone(t, "after the stop", append(before, child...))
	if c := h.count(f, commit); c.Runs != 1 {
		t.Errorf("the next job ran as job %d of its process, want a fresh process", c.Runs)
	}
	if after := h.warmPids(f.runtime); len(after) != 1 || slices.Contains(before, after[0]) {
		t.Errorf("warm processes %v after %v", after, before)
	}
}

// TestWarmCancelKillsTree: canceling a warm job kills its process and
// what it spawned; the next job gets a fresh process.
func TestWarmCancelKillsTree(t *testing.T) {
	t.Parallel()
	h := setupWarm(t, spine.DefaultWarm, nil)
	for _, f := range warmFixtures {
		t.Run(f.runtime, func(t *testing.T) {
			t.Parallel()
			stopped(t, h, f, time.Minute, func(id uuid.UUID) { cancelJob(t, h, id) }, spine.StatusCanceled)
		})
	}
}

// TestWarmTimeoutKillsTree: a warm job past its timeout is killed with
// its process tree.
func TestWarmTimeoutKillsTree(t *testing.T) {
	t.Parallel()
	h := setupWarm(t, spine.DefaultWarm, nil)
	for _, f := range warmFixtures {
		t.Run(f.runtime, func(t *testing.T) {
			t.Parallel()
			stopped(t, h, f, 2*time.Second, func(uuid.UUID) {}, spine.StatusFailure)
		})
	}
}

// TestWarmCrashFailsAlone: a job that exits its process or segfaults
// fails alone; the next job works, in a fresh process.
func TestWarmCrashFailsAlone(t *testing.T) {
	t.Parallel()
	h := setupWarm(t, spine.DefaultWarm, nil)
	for _, f := range warmFixtures {
		t.Run(f.runtime, func(t *testing.T) {
			t.Parallel()
			exit := "exit"
			if f.runtime == "python" {
				exit = "exit_hard" // os._exit: sys.exit is an exception the wrapper reports
			}
			for _, tc := range []struct{ action, want string }{
				{exit, "process exited with status 3"},
				{"segv", "process killed by signal 11"},
			} {
				commit := "c-" + f.runtime
				h.count(f, commit)
				pids := h.warmPids(f.runtime)
				j := h.run(f, commit, tc.action, "")
				if j.Status != spine.StatusFailure || j.Error == nil || !strings.Contains(j.Error.Message, tc.want) {
					t.Errorf("%s: %s %+v, want a failure saying %q", tc.action, j.Status, j.Error, tc.want)
				}
				assertGone(t, tc.action, pids)
				if c := h.count(f, commit); c.Runs != 1 {
					t.Errorf("after %s the next job ran as job %d of its process", tc.action, c.Runs)
				}
			}
		})
	}
}

// TestWarmRecycleAfterMaxJobs: a process serves max_jobs jobs, then a new
// one takes over.
func TestWarmRecycleAfterMaxJobs(t *testing.T) {
	t.Parallel()
	h := setupWarm(t, spine.Warm{MaxJobs: 2}, nil)
	f := warmFixtures[0]
	var runs []int
	var pids [][]int
	for range 5 {
		runs = append(runs, h.count(f, "c-bun").Runs)
		pids = append(pids, h.warmPids(f.runtime))
	}
	if fmt.Sprint(runs) != "[1 2 1 2 1]" {
		t.Errorf("job numbers in their processes %v, want [1 2 1 2 1]", runs)
	}
	if len(pids[1]) != 0 || len(pids[3]) != 0 || len(pids[0]) != 1 || len(pids[2]) != 1 || len(pids[4]) != 1 ||
		pids[0][0] == pids[2][0] || pids[2][0] == pids[4][0] {
		t.Errorf("pool pids after each job %v: want none after a process's 2nd job, a new pid each time", pids)
	}
}

// TestWarmIdleRecycle: a process idle past its policy's idle time is gone,
// and the next job starts a new one.
func TestWarmIdleRecycle(t *testing.T) {
	t.Parallel()
	h := setupWarm(t, spine.Warm{Idle: 500 * time.Millisecond}, nil)
	f := warmFixtures[0]
	h.count(f, "c-bun")
	pids := h.warmPids(f.runtime) // none when the host was slower than the idle time
	deadline := time.Now().Add(10 * time.Second)
	for h.runner.WarmStats().Processes != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("stats after idle: %+v", h.runner.WarmStats())
		}
		time.Sleep(20 * time.Millisecond) // polling the pool
	}
	assertGone(t, "idle", pids)
	if c := h.count(f, "c-bun"); c.Runs != 1 {
		t.Errorf("job %d of a process that should be new", c.Runs)
	}
}

// TestWarmMemoryRecycle: a process left near its memory limit by a job
// (module state holding memory) is recycled before the next job.
func TestWarmMemoryRecycle(t *testing.T) {
	t.Parallel()
	const limit = 128 << 20
	h := setupWarm(t, spine.DefaultWarm, nil)
	f := warmFixtures[2] // python: a small, predictable heap
	j := f.job("c-python", "count", "")
	j.limits = spine.Limits{Memory: limit}
	if got := h.wait(h.enqueue(j), time.Minute); got.Status != spine.StatusSuccess {
		t.Fatalf("count: %s %+v", got.Status, got.Error)
	}
	st := h.runner.WarmStats()
	if len(st.Each) != 1 || st.Each[0].IdleMemory <= 0 {
		t.Fatalf("stats %+v", st)
	}
	// Up to 93% of the limit: past the 90% the pool allows, below the
	// kernel's limit.
	hog := int64(limit)*93/100 - st.Each[0].IdleMemory
	j = f.job("c-python", "hog", fmt.Sprintf(`{"bytes":%d}`, hog))
	j.limits = spine.Limits{Memory: limit}
	if got := h.wait(h.enqueue(j), time.Minute); got.Status != spine.StatusSuccess {
		t.Fatalf("hog %d bytes: %s %+v", hog, got.Status, got.Error)
	}
	assertGone(t, "over memory", []int{st.Each[0].Pid})
}

// TestWarmNewCommit: a job of a newer commit of the app gets a process of
// its own and drains the older commit's idle ones; a job of the older
// commit still queued runs on the old code, in a process of its own,
// which does not stay.
func TestWarmNewCommit(t *testing.T) {
	t.Parallel()
	h := setupWarm(t, spine.DefaultWarm, nil)
	for _, v := range []string{"old", "new"} {
		h.putFixture("apps/bun", "c-"+v, map[string]string{"version.ts": `export default () => ({ version: "` + v + `" });`})
	}
	version := func(id uuid.UUID) string {
		j := h.wait(id, time.Minute)
		var r struct{ Version string }
		if j.Status != spine.StatusSuccess || json.Unmarshal(j.Result, &r) != nil {
			t.Fatalf("%s %s %+v", j.Status, j.Result, j.Error)
		}
		return r.Version
	}
	at := func(commit string, when time.Time) uuid.UUID {
		res, err := h.store.Enqueue(context.Background(), spine.EnqueueParams{Workspace: "ws", TriggerKind: spine.TriggerAPI,
			Input: json.RawMessage("null"), ScheduledFor: when, Pin: spine.Pin{GitSourceID: "src", CommitSHA: commit, AppKey: "versioned",
				ActionKey: "v", Entrypoint: "version.ts", Runtime: "bun", Timeout: time.Minute, Tag: spine.DefaultTag}})
		if err != nil {
			t.Fatal(err)
		}
		return res.ID
	}
	commits := func() []string {
		var cs []string
		for _, p := range h.runner.WarmStats().Each {
			cs = append(cs, p.Commit)
		}
		slices.Sort(cs)
		return cs
	}
	if v := version(at("c-old", time.Time{})); v != "old" {
		t.Fatalf("old commit answered %q", v)
	}
	// Queued before the new commit's job, run after it.
	queued := at("c-old", time.Now().Add(3*time.Second))
	if v := version(at("c-new", time.Time{})); v != "new" {
		t.Errorf("new commit answered %q", v)
	}
	if cs := commits(); fmt.Sprint(cs) != "[c-new]" {
		t.Errorf("processes of commits %v after the new commit's job, want [c-new]", cs)
	}
	newPids := h.warmPids("versioned")
	if v := version(queued); v != "old" {
		t.Errorf("the old commit's queued job ran %q code", v)
	}
	if cs, pids := commits(), h.warmPids("versioned"); fmt.Sprint(cs) != "[c-new]" || !slices.Equal(pids, newPids) {
		t.Errorf("after the old job: processes of %v (pids %v, before %v), want the new commit's alone", cs, pids, newPids)
	}
}

// TestWarmForgedAnswer: job code that writes to the answer pipe breaks
// only its own job: a frame that is not one, or one for another request,
// fails the job and retires the process; a frame bigger than the result
// limit is refused as an oversized result.
func TestWarmForgedAnswer(t *testing.T) {
	t.Parallel()
	h := setupWarm(t, spine.DefaultWarm, func(c *Config) { c.MaxResultBytes = 4096 })
	f := warmFixtures[0]
	for i, tc := range []struct{ frame, want string }{
		{"garbage\n", "broke its answer protocol"},
		{"result 99 2\n{}", "broke its answer protocol"},
		// A header whose payload never comes: the wrapper's own answer
		// is read as payload, the fence is not followed by an answer.
		{"result 2 999999\n", "broke its answer protocol"},
		{"result 2 5000\n" + strings.Repeat("x", 5000), "over the limit of 4096 bytes"},
	} {
		// An app per case: a fresh process, whose requests are 1 (count)
		// and 2 (forge).
		app := fmt.Sprintf("forge-%d", i)
		run := func(action, input string) spine.Job {
			j := f.job("c-bun", action, input)
			j.app = app
			return h.wait(h.enqueue(j), time.Minute)
		}
		run("count", "")
		pids := h.warmPids(app)
		in, _ := json.Marshal(map[string]string{"frame": tc.frame})
		j := run("forge", string(in))
		if j.Status != spine.StatusFailure || j.Error == nil || !strings.Contains(j.Error.Message, tc.want) {
			t.Errorf("frame %q: %s %s %+v, want a failure saying %q", tc.frame, j.Status, j.Result, j.Error, tc.want)
		}
		// The process is not trusted again: the next job never sees the
		// frames left in the pipe and runs in a fresh process (at once, or
		// after the one the stale frame is found in).
		for range 2 {
			if j := run("count", ""); j.Status != spine.StatusSuccess {
				t.Errorf("after frame %q: %s %+v", tc.frame, j.Status, j.Error)
			}
		}
		assertGone(t, "after a forged answer", pids)
	}
}

// TestWarmLostLeaseKillsTree: a warm job whose lease is lost (the reaper
// requeued it) has its process tree killed; nothing of it goes on.
func TestWarmLostLeaseKillsTree(t *testing.T) {
	t.Parallel()
	h := setupWarm(t, spine.DefaultWarm, nil)
	f := warmFixtures[0]
	h.count(f, "c-bun")
	before := h.warmPids(f.runtime)
	secs := uniqueSeconds()
	id := h.enqueue(f.job("c-bun", "spawn", `{"seconds":`+secs+`}`))
	h.waitLogs(id, "started", 30*time.Second)
	child := hostPids(func(pid int) bool { return strings.HasSuffix(procCmdline(pid), ":sleep "+secs) })
	if len(child) != 1 || len(before) != 1 {
		t.Fatalf("child %v, warm processes %v", child, before)
	}
	// A zombie timeout of 1ns makes every running job a zombie: the lease
	// is taken from the live worker, whose next heartbeat finds it lost.
	// The requeued job is canceled at once, before the worker could claim
	// it again (it would run anew in another process).
	res, err := h.store.Reap(context.Background(), spine.ReapParams{ZombieTimeout: time.Nanosecond, RestartLimit: 3, Limit: 10})
	if err != nil || len(res.Requeued) != 1 {
		t.Fatalf("reap: %+v %v", res, err)
	}
	cancelJob(t, h, id)
	if j := h.wait(id, 30*time.Second); j.Status != spine.StatusCanceled || j.StartedAt != nil && j.Attempt > 1 {
		t.Fatalf("requeued job %s attempt %d, want canceled before a second run", j.Status, j.Attempt)
	}
	assertGone(t, "after the lost lease", append(before, child...))
}
