package server_test

import (
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/runner"
	"github.com/windforce/windforce/spine"
)

// startWorker runs a runner-backed worker in-process on e's store and
// cache. It skips loudly without bun (fails with WINDFORCE_TEST_REQUIRE_BUN=1).
func (e *env) startWorker(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bun"); err != nil {
		testdb.Unavailable(t, "WINDFORCE_TEST_REQUIRE_BUN", "bun", err)
	}
	log := slog.New(slog.DiscardHandler)
	r, err := runner.New(runner.Config{Store: e.db, Cache: e.cache, Dir: filepath.Join(t.TempDir(), "wf"),
		KillGrace: runner.DefaultKillGrace, MaxResultBytes: 1 << 20, MaxLogBytes: 1 << 20, Secret: secret, URL: e.url, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	w, err := spine.NewWorker(spine.WorkerConfig{Store: e.db, Handler: r.Handle, Name: "test-worker",
		Tags: []string{spine.DefaultTag}, Concurrency: 2, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
}

// TestRunWaitWithWorker runs examples/hello through a real worker: ?wait
// answers 200 with the result, or with the error of a failed job, and the
// job's logs hold its output.
func TestRunWaitWithWorker(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		e.startWorker(t)
		ok := e.call("POST", "/api/w/ws/jobs/run/hello/greet?wait=60s", adminToken, `{"name":"Ada"}`).want(200).obj()
		if ok["status"] != "success" || ok["result"].(map[string]any)["greeting"] != "Hello, Ada!" {
			t.Fatalf("greet answered %v", ok)
		}
		logs := e.call("GET", "/api/w/ws/jobs/"+ok["id"].(string)+"/logs", adminToken, "").want(200)
		if !strings.Contains(string(logs.body), "greeting Ada") {
			t.Fatalf("logs %q", logs.body)
		}
		job := e.call("GET", "/api/w/ws/jobs/"+ok["id"].(string), adminToken, "").want(200).obj()
		if job["worker"] != "test-worker" || job["started_at"] == nil || job["completed_at"] == nil {
			t.Fatalf("finished job %v", job)
		}
		bad := e.call("POST", "/api/w/ws/jobs/run/hello/fail?wait=60s", adminToken, `{"message":"boom"}`).want(200).obj()
		if bad["status"] != "failure" || !strings.Contains(bad["error"].(map[string]any)["message"].(string), "boom") {
			t.Fatalf("fail answered %v", bad)
		}
		if _, has := bad["result"]; has {
			t.Fatalf("failed job answered a result: %v", bad)
		}
	})
}
