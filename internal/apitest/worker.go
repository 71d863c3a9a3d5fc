package apitest

import (
	"log/slog"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/runner"
	"github.com/windforce/windforce/runner/sandbox"
	"github.com/windforce/windforce/server"
	"github.com/windforce/windforce/spine"
)

// DefaultWorkerName names a worker whose WorkerOptions.Name is empty.
const DefaultWorkerName = "test-worker"

// WorkerOptions says how the callers' workers differ.
type WorkerOptions struct {
	// Name is the worker's name, as jobs report it (default
	// DefaultWorkerName).
	Name string
	// Heartbeat is the lease heartbeat interval (0: spine's default).
	Heartbeat time.Duration
	// Shared are host directories every job sees read-write (the job
	// sandbox shows nothing else of the host's temporary directories).
	Shared []string
}

// runtimes maps a runtime to the program it needs and the variable that
// makes its absence a failure rather than a skip.
var runtimes = map[string]struct{ program, require string }{
	"bun":    {"bun", "WINDFORCE_TEST_REQUIRE_BUN"},
	"python": {"python3", "WINDFORCE_TEST_REQUIRE_PYTHON"},
}

// StartWorker runs a runner-backed worker in-process on e's store and
// cache, stopped at cleanup. runtime ("bun" or "python") is the program
// the test's jobs need: without it the test skips loudly, or fails when
// WINDFORCE_TEST_REQUIRE_BUN=1 (WINDFORCE_TEST_REQUIRE_PYTHON=1).
func StartWorker(t testing.TB, e *Env, runtime string, opts WorkerOptions) {
	t.Helper()
	rt, ok := runtimes[runtime]
	if !ok {
		t.Fatalf("apitest.StartWorker: unknown runtime %q (want bun or python)", runtime)
	}
	if _, err := exec.LookPath(rt.program); err != nil {
		testdb.Unavailable(t, rt.require, rt.program, err)
	}
	testdb.RequireSandbox(t)
	if opts.Name == "" {
		opts.Name = DefaultWorkerName
	}
	log := slog.New(slog.DiscardHandler)
	r, err := runner.New(runner.Config{Store: e.DB, Cache: e.Cache, Dir: filepath.Join(t.TempDir(), "wf"),
		KillGrace: runner.DefaultKillGrace, MaxResultBytes: 1 << 20, MaxLogBytes: 1 << 20,
		Secret: e.Options.Secret, URL: e.URL, Logger: log, Sandbox: sandbox.Config{Shared: opts.Shared},
		Secrets: secretStore(e.DB)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	w, err := spine.NewWorker(spine.WorkerConfig{Store: e.DB, Handler: r.Handle, Name: opts.Name,
		Tags: []string{spine.DefaultTag}, Concurrency: 2, Heartbeat: opts.Heartbeat, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
}

// secretStore is db as the runner's secret store: the backend's concrete
// store is one (New takes the store core).
func secretStore(db server.Store) runner.SecretStore {
	ss, _ := db.(runner.SecretStore)
	return ss
}
