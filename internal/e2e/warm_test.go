package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/internal/gittest"
	"github.com/windforce/windforce/runner"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/spine"
)

// TestWarmFromManifest: `warm:` in a synced manifest reaches the worker
// through the job's pin (DESIGN §7): the app's jobs share a process that
// imported the entrypoint once, recycled after max_jobs; an action with
// `warm: false` starts a fresh process each time. On both pairings.
func TestWarmFromManifest(t *testing.T) {
	t.Parallel()
	bun := requireBun(t)
	forEachPairing(t, func(t *testing.T, w *world) {
		r := gittest.New(t)
		r.Write(t, map[string]string{
			"windforce.yaml": "apps:\n  counter:\n    entrypoint: main.ts\n    runtime: bun\n    warm: { max_jobs: 2 }\n" +
				"    actions:\n      count: {}\n      cold: { warm: false }\n",
			"main.ts": "let runs = 0;\nexport default () => ({ runs: ++runs });\n",
		})
		r.CommitPush(t, "warm counter")
		sy := &source.Syncer{Catalog: w.db, Cache: w.cache, Logger: quietLogger(), AnyFileSource: true}
		if err := sy.AddSource(t.Context(), catalog.Source{Workspace: ws, ID: "counter", URL: r.URL, Branch: "main"}); err != nil {
			t.Fatal(err)
		}
		if _, err := sy.Sync(t.Context(), ws, "counter"); err != nil {
			t.Fatalf("sync: %v", err)
		}
		w.startWorker(t, bun)
		runs := func(action string, n int) string {
			var got []int
			for range n {
				res, err := w.db.EnqueueAction(t.Context(), catalog.EnqueueRequest{Workspace: ws, App: "counter",
					Action: action, TriggerKind: spine.TriggerAPI, CreatedBy: "e2e", Input: json.RawMessage("null")})
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, w.runs(t, res.ID))
			}
			return fmt.Sprint(got)
		}
		if got := runs("count", 5); got != "[1 2 1 2 1]" {
			t.Errorf("warm counter/count ran as jobs %s of their processes, want [1 2 1 2 1]", got)
		}
		if got := runs("cold", 2); got != "[1 1]" {
			t.Errorf("counter/cold (warm: false) ran as jobs %s, want [1 1]", got)
		}
	})
}

// runs waits for the job and reads its {"runs": n} result.
func (w *world) runs(t *testing.T, id uuid.UUID) int {
	t.Helper()
	j := w.waitTerminal(t, id, 60*time.Second)
	var r struct{ Runs int }
	if j.Status != spine.StatusSuccess || json.Unmarshal(j.Result, &r) != nil {
		t.Fatalf("job %s %s %+v; logs:\n%s", j.Status, j.Result, j.Error, w.logs(t, id))
	}
	return r.Runs
}

// drainManifest is the manifest of TestWarmDrainsGoneCommits at a commit:
// the warm app "drain" (its action "later" on a tag of its own, to hold a
// job in the queue) and, when other is set, the warm app "other".
func drainManifest(other bool) string {
	m := "apps:\n  drain:\n    entrypoint: main.ts\n    runtime: bun\n    warm: true\n" +
		"    actions:\n      run: {}\n      later: { tag: later }\n"
	if other {
		m += "  other:\n    entrypoint: main.ts\n    runtime: bun\n    warm: true\n    actions:\n      run: {}\n"
	}
	return m
}

// TestWarmDrainsGoneCommits: a commit no longer in the catalog drains its
// warm processes (DESIGN §7) with no job of the new commit ever run: the
// source synced to B retires A's idle process of "drain", and "other",
// removed from the manifest at B, loses its process too, within a few
// catalog intervals. A job pinned to A still queued then runs A's code in
// a fresh process, retired after it; a job of B runs B's. On both
// pairings.
func TestWarmDrainsGoneCommits(t *testing.T) {
	t.Parallel()
	bun := requireBun(t)
	forEachPairing(t, func(t *testing.T, w *world) {
		repo := gittest.New(t)
		code := func(version string) string {
			return "let runs = 0;\nexport default () => ({ version: " + fmt.Sprintf("%q", version) + ", runs: ++runs });\n"
		}
		repo.Write(t, map[string]string{"windforce.yaml": drainManifest(true), "main.ts": code("A")})
		commitA := repo.CommitPush(t, "A")
		sy := &source.Syncer{Catalog: w.db, Cache: w.cache, Logger: quietLogger(), AnyFileSource: true}
		if err := sy.AddSource(t.Context(), catalog.Source{Workspace: ws, ID: "drain", URL: repo.URL, Branch: "main"}); err != nil {
			t.Fatal(err)
		}
		if _, err := sy.Sync(t.Context(), ws, "drain"); err != nil {
			t.Fatalf("sync A: %v", err)
		}
		r := w.startWorker(t, bun, func(c *runner.Config) {
			c.Catalog, c.CatalogInterval, c.WarmProcesses = w.db, 100*time.Millisecond, 4
		})
		run := func(app, action string) uuid.UUID {
			res, err := w.db.EnqueueAction(t.Context(), catalog.EnqueueRequest{Workspace: ws, App: app,
				Action: action, TriggerKind: spine.TriggerAPI, CreatedBy: "e2e", Input: json.RawMessage("null")})
			if err != nil {
				t.Fatal(err)
			}
			return res.ID
		}
		wantRun(t, w, run("drain", "run"), "A", 1)
		wantRun(t, w, run("other", "run"), "A", 1)
		held := append(warmPids(r, "drain", commitA), warmPids(r, "other", commitA)...)
		if len(held) != 2 {
			t.Fatalf("warm processes of A: %v, want one per app", held)
		}
		queued := run("drain", "later") // pinned to A; no worker serves "later" yet

		repo.Write(t, map[string]string{"windforce.yaml": drainManifest(false), "main.ts": code("B")})
		commitB := repo.CommitPush(t, "B without other")
		if _, err := sy.Sync(t.Context(), ws, "drain"); err != nil {
			t.Fatalf("sync B: %v", err)
		}
		waitNoWarm(t, r, held, 10*time.Second)

		w.serve(t, r, "later")
		j := wantRun(t, w, queued, "A", 1) // A's code, in a fresh process
		if j.Pin.CommitSHA != commitA {
			t.Fatalf("queued job pinned to %.12s, want A %.12s", j.Pin.CommitSHA, commitA)
		}
		waitNoWarm(t, r, nil, 10*time.Second) // retired after its job: A is gone
		wantRun(t, w, run("drain", "run"), "B", 1)
		if got := warmPids(r, "drain", commitB); len(got) != 1 {
			t.Fatalf("warm processes of B: %v, want 1", got)
		}
	})
}

// wantRun waits for the job and checks its {"version", "runs"} result.
func wantRun(t *testing.T, w *world, id uuid.UUID, version string, runs int) spine.Job {
	t.Helper()
	j := w.waitTerminal(t, id, 60*time.Second)
	var r struct {
		Version string
		Runs    int
	}
	if j.Status != spine.StatusSuccess || json.Unmarshal(j.Result, &r) != nil || r.Version != version || r.Runs != runs {
		t.Fatalf("job %s %s %s %+v, want version %s run %d; logs:\n%s", j.Pin.AppKey, j.Status, j.Result, j.Error, version, runs, w.logs(t, id))
	}
	return j
}

// warmPids are the host pids of r's warm processes of app at commit.
func warmPids(r *runner.Runner, app, commit string) []int {
	var pids []int
	for _, p := range r.WarmStats().Each {
		if p.App == app && p.Commit == commit && p.Pid > 0 {
			pids = append(pids, p.Pid)
		}
	}
	return pids
}

// waitNoWarm polls until r holds no warm process and none of pids is
// alive, failing after within.
func waitNoWarm(t *testing.T, r *runner.Runner, pids []int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		st := r.WarmStats()
		alive := slices.DeleteFunc(slices.Clone(pids), func(pid int) bool { return !processAlive(pid) })
		if st.Processes == 0 && len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: the pool holds %+v; alive: %v", within, st.Each, alive)
		}
		time.Sleep(20 * time.Millisecond) // polling the pool and /proc
	}
}

// processAlive: pid is a live process (not a zombie).
func processAlive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && len(stat) > i+2 && stat[i+2] != 'Z' && stat[i+2] != 'X'
}
