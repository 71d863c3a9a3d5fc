package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/spine"
)

// TestWorkerKilledWithWarmProcesses SIGKILLs a worker process holding two
// warm processes, one idle and one busy with a long job: every process of
// both sandbox trees (bwrap's two, the runtime, the job's child) is gone
// within the kill grace (+1 s of slack) through Pdeathsig and
// --die-with-parent; the reaper requeues the busy job (a restart, not an
// attempt); the finished job is untouched; a second worker completes the
// requeued job and serves new ones. On Postgres and SQLite.
func TestWorkerKilledWithWarmProcesses(t *testing.T) {
	t.Parallel()
	testdb.RequireSandbox(t)
	requireBun(t)
	for _, driver := range []string{"postgres", "sqlite"} {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			testKilledWithWarm(t, driver)
		})
	}
}

func testKilledWithWarm(t *testing.T, driver string) {
	s, url, schema := crashStore(t, driver)
	root := t.TempDir()
	h := &harness{t: t, store: s}
	var err error
	if h.cache, err = objectcache.NewFileCache(filepath.Join(root, "objects")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unsealAll(t, root) })
	if err := os.Mkdir(filepath.Join(root, "shared"), 0o777); err != nil { // the helper's sandbox shares it
		t.Fatal(err)
	}
	f := warmFixtures[0]
	h.putFixture(f.dir, "c-bun", nil)
	warmJob := func(action, input string) job {
		j := f.job("c-bun", action, input)
		j.warm = &spine.DefaultWarm
		return j
	}
	env := envDriver + "=" + driver

	first := startHelper(t, url, schema, root, env)
	t.Cleanup(func() { killWarm(first.Process.Pid) })
	secs := uniqueSeconds()
	busy := h.enqueue(warmJob("spawn", `{"seconds":`+secs+`}`))
	h.waitLogs(busy, "started", 30*time.Second)
	// In a second process (the first is busy), idle after it.
	done := h.wait(h.enqueue(warmJob("count", "")), time.Minute)
	if done.Status != spine.StatusSuccess {
		t.Fatalf("count: %s %+v; logs:\n%s", done.Status, done.Error, h.logs(done.ID))
	}
	trees := waitWarmTrees(t, first.Process.Pid, 2)
	child := sleepers(secs)
	if len(child) != 1 {
		t.Fatalf("the busy job's child: %v", child)
	}
	var pids []int
	for _, tree := range trees {
		pids = append(pids, tree...)
	}
	pids = append(pids, child...)

	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	_ = first.Wait()
	assertGoneBy(t, "the warm trees after the worker's SIGKILL", pids, killedAt.Add(crashGrace+time.Second))

	reap(t, s)
	if j := getJob(t, s, busy); j.Status != spine.StatusQueued || j.Restarts != 1 || j.Attempt != 1 {
		t.Fatalf("the busy job after the reaper: %s restarts %d attempt %d, want queued, 1 restart, attempt 1", j.Status, j.Restarts, j.Attempt)
	}
	if j := getJob(t, s, done.ID); j.Status != spine.StatusSuccess || !bytes.Equal(j.Result, done.Result) {
		t.Fatalf("the finished job changed: %s %s, was %s", j.Status, j.Result, done.Result)
	}

	second := startHelper(t, url, schema, root, env)
	t.Cleanup(func() { killWarm(second.Process.Pid) })
	child = waitSleepers(t, secs) // the requeued job runs again, in a fresh process
	_ = syscall.Kill(child[0], syscall.SIGKILL)
	if j := h.wait(busy, time.Minute); j.Status != spine.StatusSuccess || j.Restarts != 1 {
		t.Fatalf("the requeued job: %s %+v restarts %d; logs:\n%s", j.Status, j.Error, j.Restarts, h.logs(busy))
	}
	if j := h.wait(h.enqueue(warmJob("count", "")), time.Minute); j.Status != spine.StatusSuccess {
		t.Fatalf("a new job after the crash: %s %+v", j.Status, j.Error)
	}
}

func getJob(t *testing.T, s spine.Store, id uuid.UUID) spine.Job {
	t.Helper()
	j, err := s.GetJob(context.Background(), "ws", id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// warmTrees are the live processes of the warm processes of the worker
// whose pid is worker, by warm process id: each carries WF_WARM_ID=w<n>-<worker>
// in its environment, bwrap's two included.
func warmTrees(worker int) map[string][]int {
	suffix := "-" + strconv.Itoa(worker)
	trees := map[string][]int{}
	hostPids(func(pid int) bool {
		if !alive(pid) {
			return false
		}
		env, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		for _, e := range bytes.Split(env, []byte{0}) {
			if id, ok := strings.CutPrefix(string(e), "WF_WARM_ID="); ok && strings.HasSuffix(id, suffix) {
				trees[id] = append(trees[id], pid)
				return true
			}
		}
		return false
	})
	return trees
}

// waitWarmTrees polls until the worker has n warm processes, each a
// sandbox tree of at least three processes (bwrap's two and the runtime).
func waitWarmTrees(t *testing.T, worker, n int) map[string][]int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		trees := warmTrees(worker)
		full := 0
		for _, tree := range trees {
			if len(tree) >= 3 {
				full++
			}
		}
		if full >= n {
			return trees
		}
		if time.Now().After(deadline) {
			t.Fatalf("warm processes of worker %d: %v, want %d trees", worker, trees, n)
		}
		time.Sleep(10 * time.Millisecond) // polling /proc
	}
}

// killWarm kills what is left of a worker's warm processes (cleanup).
func killWarm(worker int) {
	for _, tree := range warmTrees(worker) {
		for _, pid := range tree {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// sleepers are the live "sleep secs" processes (a spawn job's child).
func sleepers(secs string) []int {
	return hostPids(func(pid int) bool { return alive(pid) && strings.HasSuffix(procCmdline(pid), ":sleep "+secs) })
}

func waitSleepers(t *testing.T, secs string) []int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if pids := sleepers(secs); len(pids) > 0 {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("no process sleeps %s s", secs)
		}
		time.Sleep(10 * time.Millisecond) // polling /proc
	}
}
