package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// countingBun writes a bun wrapper that appends a line to a file for each
// `bun install`, then runs the real bun; it returns the wrapper and a
// function counting the installs.
func countingBun(t *testing.T) (string, func() int) {
	bun := requireBun(t)
	dir := t.TempDir()
	count := filepath.Join(dir, "installs")
	// An install that starts while another runs records "overlap".
	busy := filepath.Join(dir, "busy")
	script := fmt.Sprintf("#!/bin/sh\numask 000\nif [ \"$1\" = install ]; then echo install >>%q\n"+
		"  if [ -e %q ]; then echo overlap >>%q; fi; touch %q; sleep 0.3; rm -f %q\nfi\nexec %q \"$@\"\n",
		count, busy, count, busy, busy, bun)
	wrapper := filepath.Join(dir, "bun")
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// Installs run sandboxed: the count is kept in a directory every job
	// may write (Config.Sandbox.Shared, set by withBun).
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	sharedDirs.Store(wrapper, dir)
	return wrapper, func() int {
		data, _ := os.ReadFile(count)
		if strings.Contains(string(data), "overlap") {
			t.Error("two installs of one workspace ran at once")
		}
		return strings.Count(string(data), "install")
	}
}

// sharedDirs maps a counting wrapper to the directory its jobs must see.
var sharedDirs sync.Map

// withBun makes a runner use the counting wrapper and share its directory.
func withBun(bun string) func(*Config) {
	return func(c *Config) {
		c.Runtimes = map[string]string{"bun": bun}
		if d, ok := sharedDirs.Load(bun); ok {
			c.Sandbox.Shared = []string{d.(string)}
		}
	}
}

type depsResult struct {
	Installed bool   `json:"installed"`
	Commit    string `json:"commit"`
	Version   string `json:"version"`
}

// TestDepsInstalledOncePerCommit starts 8 jobs of a fresh commit with a
// package.json at once: one download, one install, all succeed.
func TestDepsInstalledOncePerCommit(t *testing.T) {
	t.Parallel()
	bun, installs := countingBun(t)
	h := setup(t, harnessOpts{concurrency: 8, cfg: withBun(bun)})
	h.putFixture("deps", "c-deps", map[string]string{"version.txt": "v1"})
	ids := make([]uuid.UUID, 8)
	for i := range ids {
		ids[i] = h.enqueue(job{commit: "c-deps", entry: "main.ts", runtime: "bun", action: "run"})
	}
	for _, id := range ids {
		j := h.wait(id, 60*time.Second)
		r := decodeDeps(t, j)
		if !r.Installed || r.Version != "v1" {
			t.Errorf("job %s: %+v", id, r)
		}
	}
	if n := installs(); n != 1 {
		t.Fatalf("bun install ran %d times for one commit, want 1", n)
	}
}

// TestInstallsOfOneWorkspaceWait: two new commits of one workspace
// install one after the other (they share the workspace's package cache,
// which each install's uid gets in turn), and all their jobs succeed.
func TestInstallsOfOneWorkspaceWait(t *testing.T) {
	t.Parallel()
	bun, installs := countingBun(t)
	h := setup(t, harnessOpts{concurrency: 4, cfg: withBun(bun)})
	var ids []uuid.UUID
	for _, c := range []string{"c-one", "c-two"} {
		h.putFixture("deps", c, map[string]string{"version.txt": c})
	}
	for _, c := range []string{"c-one", "c-two", "c-one", "c-two"} {
		ids = append(ids, h.enqueue(job{commit: c, entry: "main.ts", runtime: "bun", action: "run"}))
	}
	for _, id := range ids {
		if r := decodeDeps(t, h.wait(id, 60*time.Second)); !r.Installed {
			t.Errorf("job %s: %+v", id, r)
		}
	}
	if n := installs(); n != 2 {
		t.Fatalf("%d installs for two commits, want 2", n)
	}
}

func decodeDeps(t *testing.T, j spine.Job) depsResult {
	t.Helper()
	if j.Status != spine.StatusSuccess {
		t.Fatalf("job %s: %s %+v", j.ID, j.Status, j.Error)
	}
	var r depsResult
	if err := json.Unmarshal(j.Result, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPinnedCommitStaysPinned: a job pinned to commit A runs A's files
// after commit B is synced and run.
func TestPinnedCommitStaysPinned(t *testing.T) {
	t.Parallel()
	requireBun(t)
	h := setup(t, harnessOpts{})
	h.putFixture("deps", "c-a", map[string]string{"version.txt": "A"})
	run := func(commit string) depsResult {
		return decodeDeps(t, h.wait(h.enqueue(job{commit: commit, entry: "main.ts", runtime: "bun", action: "run"}), 60*time.Second))
	}
	if r := run("c-a"); r.Version != "A" {
		t.Fatalf("commit A ran %+v", r)
	}
	h.putFixture("deps", "c-b", map[string]string{"version.txt": "B"})
	if r := run("c-b"); r.Version != "B" {
		t.Fatalf("commit B ran %+v", r)
	}
	if r := run("c-a"); r.Version != "A" || r.Commit != "c-a" {
		t.Fatalf("job pinned to A after B was synced ran %+v", r)
	}
}

// TestFailedInstallIsRetried: an install that fails fails its jobs with
// the installer's output in their logs, and the next job installs again.
func TestFailedInstallIsRetried(t *testing.T) {
	t.Parallel()
	bun, installs := countingBun(t)
	h := setup(t, harnessOpts{cfg: withBun(bun)})
	h.putFixture("deps", "c-bad", map[string]string{
		"version.txt":  "bad",
		"package.json": `{"name":"bad","version":"1.0.0","dependencies":{"nope":"file:./missing"}}`,
	})
	for attempt := 1; attempt <= 2; attempt++ {
		id := h.enqueue(job{commit: "c-bad", entry: "main.ts", runtime: "bun", action: "run"})
		j := h.wait(id, 60*time.Second)
		if j.Status != spine.StatusFailure || j.Error == nil || !strings.Contains(j.Error.Message, "installing dependencies") {
			t.Fatalf("job %d: %s %+v", attempt, j.Status, j.Error)
		}
		if logs := h.logs(id); !strings.Contains(logs, "bun install --frozen-lockfile output") {
			t.Errorf("logs lack the installer output:\n%s", logs)
		}
		if n := installs(); n != attempt {
			t.Errorf("after job %d: %d installs, want %d", attempt, n, attempt)
		}
	}
}

// TestMissingMarkerIsRefused: a commit whose tree has no marker in the
// object cache is not run.
func TestMissingMarkerIsRefused(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOpts{})
	id := h.enqueue(job{commit: "c-never-synced", entry: "run.sh", runtime: "command", action: "echo"})
	j := h.wait(id, 30*time.Second)
	if j.Status != spine.StatusFailure || j.Error == nil || !strings.Contains(j.Error.Message, "not complete") {
		t.Fatalf("status %s error %+v", j.Status, j.Error)
	}
}

// TestEvictionKeepsCommitsInUse: past the size limit, sealed copies not in
// use are evicted least recently used first; a copy in use stays.
func TestEvictionKeepsCommitsInUse(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOpts{cfg: func(c *Config) { c.MaxCacheBytes = 1 }})
	for _, c := range []string{"c-1", "c-2", "c-3"} {
		h.putFixture("apps/command", c, nil)
	}
	j := h.wait(h.enqueue(job{commit: "c-1", entry: "run.sh", runtime: "command", action: "echo", input: "1"}), 30*time.Second)
	if j.Status != spine.StatusSuccess {
		t.Fatalf("c-1: %s %+v", j.Status, j.Error)
	}
	cc := h.runner.commits
	key := func(c string) string { return filepath.Join(h.dir, "commits", "ws", "src", c) }
	// Hold c-2 as a running job would, then prepare c-3: c-1 goes, c-2 stays.
	dir2, release, err := cc.acquire(t.Context(), &spine.ClaimedJob{Workspace: "ws",
		Pin: spine.Pin{GitSourceID: "src", CommitSHA: "c-2"}}, runtimes["command"])
	if err != nil || dir2 != key("c-2") {
		t.Fatalf("acquire c-2: %q %v", dir2, err)
	}
	j = h.wait(h.enqueue(job{commit: "c-3", entry: "run.sh", runtime: "command", action: "echo", input: "3"}), 30*time.Second)
	if j.Status != spine.StatusSuccess {
		t.Fatalf("c-3: %s %+v", j.Status, j.Error)
	}
	if isReady(key("c-1")) {
		t.Error("c-1 (not in use, least recently used) was not evicted")
	}
	if _, err := os.Stat(key("c-1")); err == nil {
		t.Error("c-1's files are still there")
	}
	if !isReady(key("c-2")) {
		t.Error("c-2 was evicted while in use")
	}
	release()
}
