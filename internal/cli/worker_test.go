package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store"
	"github.com/windforce/windforce/store/sqlite"
)

// TestRunWorkerRunsAJobAndStops runs `windforce worker` on SQLite and a
// file object cache, runs one command job through it, then stops it by
// canceling its context.
func TestRunWorkerRunsAJobAndStops(t *testing.T) {
	t.Parallel()
	testdb.RequireSandbox(t)
	root := t.TempDir()
	dbURL := "sqlite://" + filepath.Join(root, "wf.db")
	var out, errOut bytes.Buffer
	if err := Run(context.Background(), []string{"migrate", "--database-url", dbURL}, &out, &errOut); err != nil {
		t.Fatalf("migrate: %v\n%s", err, errOut.String())
	}
	cache, err := objectcache.NewFileCache(filepath.Join(root, "objects"))
	if err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho hello from the worker\necho '{\"ok\":true}' >\"$WF_RESULT\"\n"
	key := objectcache.Key{Workspace: "ws", Source: "src", Commit: "c1"}
	if err := cache.Put(context.Background(), key, []objectcache.File{{Path: "run.sh", Mode: 0o755, Data: []byte(script)}}); err != nil {
		t.Fatal(err)
	}
	d, err := sqlite.Open(context.Background(), filepath.Join(root, "wf.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := store.New(d)
	defer s.Close()
	res, err := s.Enqueue(context.Background(), spine.EnqueueParams{Workspace: "ws", TriggerKind: spine.TriggerCLI,
		Input: json.RawMessage(`{}`), Pin: spine.Pin{GitSourceID: "src", CommitSHA: "c1", AppKey: "a", ActionKey: "b",
			Entrypoint: "run.sh", Runtime: "command", Timeout: time.Minute, Tag: "blue"}})
	if err != nil {
		t.Fatal(err)
	}

	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var wOut, wErr bytes.Buffer
	go func() {
		done <- RunWorker(ctx, []string{"--database-url", dbURL, "--object-cache", "file://" + filepath.Join(root, "objects"),
			"--dir", filepath.Join(root, "wf"), "--tags", "red, blue", "--concurrency", "2", "--heartbeat", "100ms",
			"--secret", workerSecret, "--max-log-bytes", "64KiB"}, &wOut, &wErr)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		j, err := s.GetJob(context.Background(), "ws", res.ID)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status.Terminal() {
			if j.Status != spine.StatusSuccess || string(j.Result) != `{"ok": true}` && string(j.Result) != `{"ok":true}` {
				t.Fatalf("job: %s %s %+v", j.Status, j.Result, j.Error)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job still %s; worker stderr:\n%s", j.Status, wErr.String())
		}
		time.Sleep(20 * time.Millisecond) // polling the store
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("worker: %v\n%s", err, wErr.String())
	}
	if !strings.Contains(wOut.String(), "serving tags red, blue") {
		t.Errorf("worker printed %q", wOut.String())
	}
}

func TestRunWorkerRefusesBadConfig(t *testing.T) {
	t.Setenv("WINDFORCE_SECRET", workerSecret)
	t.Setenv("WINDFORCE_CONCURRENCY", "many")
	err := RunWorker(context.Background(), nil, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || ExitCode(err) != 2 || !strings.Contains(err.Error(), "WINDFORCE_CONCURRENCY") {
		t.Fatalf("bad WINDFORCE_CONCURRENCY: %v", err)
	}
	t.Setenv("WINDFORCE_CONCURRENCY", "")
	t.Setenv("WINDFORCE_SECRET", "")
	if err := RunWorker(context.Background(), nil, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "WINDFORCE_SECRET") {
		t.Fatalf("no secret: %v", err)
	}
	for in, want := range map[string]int64{"1MiB": 1 << 20, "2048": 2048, "64KiB": 64 << 10, "1GB": 1e9} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := parseSize("lots"); err == nil {
		t.Error("parseSize accepted lots")
	}
}
