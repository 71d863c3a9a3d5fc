package source_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/windforce/windforce/internal/gittest"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/source/manifest"
	"github.com/windforce/windforce/spine"
)

// TestHook: a push to the source's branch syncs; to another branch it is
// ignored.
func TestHook(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		_, commit := e.helloSource(t)
		res, err := e.syncer.Hook(t.Context(), ws, "main", "refs/heads/other")
		if err != nil || !res.Ignored {
			t.Fatalf("hook for another branch = %+v, %v; want ignored", res, err)
		}
		if src := e.source(t); src.Commit != "" {
			t.Fatalf("ignored hook synced: %+v", src)
		}
		res, err = e.syncer.Hook(t.Context(), ws, "main", "refs/heads/main")
		if err != nil || res.Commit != commit {
			t.Fatalf("hook = %+v, %v", res, err)
		}
	})
}

// TestPoller: the poller picks up a new commit without being asked.
func TestPoller(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		r, a := e.helloSource(t)
		passes := make(chan source.PassResult, 100)
		p := &source.Poller{Syncer: e.syncer, Interval: 20 * time.Millisecond,
			OnPass: func(pr source.PassResult) { passes <- pr }}
		if err := p.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		defer p.Stop()
		if err := p.Start(t.Context()); !errors.Is(err, spine.ErrAlreadyStarted) {
			t.Fatalf("second Start: %v", err)
		}
		waitCommit(t, passes, a)
		r.Write(t, map[string]string{"README.md": "v2\n"})
		b := r.CommitPush(t, "B")
		waitCommit(t, passes, b)
		p.Stop()
		p.Stop() // idempotent
		e.requireCatalogAt(t, b)
	})
}

// TestPollerDisabled: interval 0 means off.
func TestPollerDisabled(t *testing.T) {
	t.Parallel()
	p := &source.Poller{}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.Stop()
}

func waitCommit(t *testing.T, passes <-chan source.PassResult, commit string) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case pr := <-passes:
			if res, ok := pr.Synced[ws+"/main"]; ok && res.Commit == commit {
				return
			}
			if err := pr.Failed[ws+"/main"]; err != nil {
				t.Fatalf("poll sync failed: %v", err)
			}
		case <-deadline:
			t.Fatalf("poller never synced %s", commit)
		}
	}
}

// TestDeploy commits files to the branch, pushes and syncs: the catalog
// shows the change and the remote holds the commit.
func TestDeploy(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		r, _ := e.helloSource(t)
		e.sync(t)
		yaml := readFile(t, r, "windforce.yaml") + "\n      shout: {}\n"
		res, err := e.syncer.Deploy(t.Context(), ws, "main", source.DeployRequest{
			Files:   map[string][]byte{"windforce.yaml": []byte(yaml), "notes/new.txt": []byte("hi")},
			Delete:  []string{"README.md"},
			Message: "add shout",
		})
		if err != nil {
			t.Fatalf("deploy: %v", err)
		}
		head := gittest.Git(t, r.Bare, "rev-parse", "refs/heads/main")
		if res.Commit != head {
			t.Fatalf("deploy synced %s, remote head is %s", res.Commit, head)
		}
		apps := e.requireCatalogAt(t, head)
		if len(apps[0].Actions) != 4 || apps[0].Actions[2].Key != "shout" {
			t.Fatalf("deployed action missing: %d actions", len(apps[0].Actions))
		}
		if msg := gittest.Git(t, r.Bare, "log", "-1", "--format=%s%n%an"); msg != "add shout\nwindforce" {
			t.Fatalf("commit = %q", msg)
		}
		if out := gittest.Git(t, r.Bare, "ls-tree", "-r", "--name-only", "HEAD"); strings.Contains(out, "README.md") || !strings.Contains(out, "notes/new.txt") {
			t.Fatalf("tree after deploy:\n%s", out)
		}

		// A bad deploy is pushed (git is the truth) but the catalog refuses it.
		_, err = e.syncer.Deploy(t.Context(), ws, "main", source.DeployRequest{
			Files: map[string][]byte{"windforce.yaml": []byte("apps: {}\n")},
		})
		var se *source.SyncError
		if !errors.As(err, &se) || !se.UserError() {
			t.Fatalf("bad deploy: %v", err)
		}
		e.requireCatalogAt(t, head)
		for _, bad := range []string{"../x", "/etc/x", ".git/config"} {
			_, err := e.syncer.Deploy(t.Context(), ws, "main", source.DeployRequest{Files: map[string][]byte{bad: nil}})
			if !errors.Is(err, manifest.ErrInvalid) {
				t.Errorf("deploy of %q: %v; want refused", bad, err)
			}
		}
	})
}

// TestPollerStartStopStress starts and stops a poller many times, from
// several goroutines, with passes in flight; -race and goleak check it.
func TestPollerStartStopStress(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		p := &source.Poller{Syncer: e.syncer, Interval: time.Millisecond}
		done := make(chan struct{})
		for range 3 {
			go func() {
				defer func() { done <- struct{}{} }()
				for range 20 {
					if err := p.Start(t.Context()); err != nil && !errors.Is(err, spine.ErrAlreadyStarted) {
						t.Error(err)
					}
					p.Stop()
				}
			}()
		}
		for range 3 {
			<-done
		}
		p.Stop()
	})
}
