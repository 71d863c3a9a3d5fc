package runner

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// TestWarmDrainBusyAfterItsJob: when the catalog moves the app to another
// commit (no job of it ever arrives), the old commit's idle process is
// retired within a few catalog intervals while its busy one finishes its
// job, and is retired right after it.
func TestWarmDrainBusyAfterItsJob(t *testing.T) {
	t.Parallel()
	var cat catalog.Store
	h := setupWarm(t, spine.DefaultWarm, func(c *Config) {
		cat = c.Store.(catalog.Store)
		c.Catalog, c.CatalogInterval = cat, 50*time.Millisecond
	})
	f := warmFixtures[0]
	ctx := context.Background()
	if err := cat.PutSource(ctx, catalog.Source{Workspace: "ws", ID: "src", URL: "file:///src.git", Branch: "main"}); err != nil {
		t.Fatal(err)
	}
	sync := func(commit string) {
		t.Helper()
		app := catalog.App{Key: f.runtime, Entrypoint: f.entry, Runtime: f.runtime, Timeout: time.Minute,
			Tag: spine.DefaultTag, Retry: spine.DefaultRetry, Warm: &spine.DefaultWarm, Actions: []catalog.Action{{Key: "count"}}}
		if err := cat.ApplySync(ctx, catalog.SyncParams{Workspace: "ws", SourceID: "src", Commit: commit, Apps: []catalog.App{app}}); err != nil {
			t.Fatal(err)
		}
	}
	sync("c-bun")
	secs := uniqueSeconds()
	id := h.enqueue(f.job("c-bun", "spawn", `{"seconds":`+secs+`}`))
	h.waitLogs(id, "started", 30*time.Second)
	child := hostPids(func(pid int) bool { return strings.HasSuffix(procCmdline(pid), ":sleep "+secs) })
	busy := h.warmPids(f.runtime)
	h.count(f, "c-bun") // in a second process: the first is busy
	var idle []int
	for _, p := range h.runner.WarmStats().Each {
		if !p.Busy {
			idle = append(idle, p.Pid)
		}
	}
	if len(idle) != 1 || len(busy) != 1 || len(child) != 1 {
		t.Fatalf("idle %v, busy %v, child %v: want one idle process and one busy", idle, busy, child)
	}

	sync("c-next") // a newer commit in the catalog; no job of it is run
	assertGone(t, "the idle process of the old commit", idle)
	if st := h.runner.WarmStats(); st.Processes != 1 || st.Busy != 1 {
		t.Fatalf("after the drain the pool holds %+v, want the busy process only", st.Each)
	}
	if err := syscall.Kill(child[0], syscall.SIGKILL); err != nil { // the job's sleep ends: its job succeeds
		t.Fatal(err)
	}
	if j := h.wait(id, 30*time.Second); j.Status != spine.StatusSuccess {
		t.Fatalf("busy job: %s %+v; logs:\n%s", j.Status, j.Error, h.logs(id))
	}
	if st := h.runner.WarmStats(); st.Processes != 0 {
		t.Fatalf("after its job the old commit's process stays: %+v", st.Each)
	}
	assertGone(t, "the busy process after its job", busy)
}
