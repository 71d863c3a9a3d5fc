package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/runner/sandbox"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store"
	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

// Environment of a helper worker process (this test binary, re-run).
const (
	envHelper = "WF_RUNNER_TEST_WORKER"
	envDriver = "WF_RUNNER_TEST_DRIVER" // "sqlite": envURL is the file
	envURL    = "WF_RUNNER_TEST_URL"
	envSchema = "WF_RUNNER_TEST_SCHEMA"
	envRoot   = "WF_RUNNER_TEST_ROOT"
)

func TestMain(m *testing.M) {
	if os.Getenv(envHelper) == "1" {
		if err := helperWorker(); err != nil {
			fmt.Fprintln(os.Stderr, "helper worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helperWorker runs a worker with two slots (and two warm processes) on
// the Postgres schema, or the SQLite file, until it is killed.
func helperWorker() error {
	ctx := context.Background()
	s, err := openHelperStore(ctx)
	if err != nil {
		return err
	}
	root := os.Getenv(envRoot)
	cache, err := objectcache.NewFileCache(filepath.Join(root, "objects"))
	if err != nil {
		return err
	}
	r, err := New(Config{Store: s, Cache: cache, Dir: filepath.Join(root, fmt.Sprintf("wf-%d", os.Getpid())),
		Secret: []byte("x"), KillGrace: crashGrace, LogFlushInterval: 50 * time.Millisecond,
		Sandbox: sandbox.Config{Shared: []string{filepath.Join(root, "shared")}}, WarmProcesses: 2})
	if err != nil {
		return err
	}
	w, err := spine.NewWorker(spine.WorkerConfig{Store: s, Handler: r.Handle, Concurrency: 2, Heartbeat: 100 * time.Millisecond,
		PollInterval: 100 * time.Millisecond})
	if err != nil {
		return err
	}
	if err := w.Start(ctx); err != nil {
		return err
	}
	select {} // until SIGKILL
}

// openHelperStore opens the helper's database (the test migrated it).
func openHelperStore(ctx context.Context) (*store.Store, error) {
	if os.Getenv(envDriver) == "sqlite" {
		d, err := sqlite.Open(ctx, os.Getenv(envURL), sqlite.Options{})
		if err != nil {
			return nil, err
		}
		return store.New(d), nil
	}
	d, err := postgres.Open(ctx, os.Getenv(envURL), postgres.Options{Schema: os.Getenv(envSchema)})
	if err != nil {
		return nil, err
	}
	return store.New(d), nil
}

// crashStore is a migrated store on a fresh Postgres schema or SQLite
// file, with what a helper needs to open it.
func crashStore(t *testing.T, driver string) (s *store.Store, url, schema string) {
	t.Helper()
	ctx := context.Background()
	if driver == "sqlite" {
		url = testdb.SQLitePath(t)
		d, err := sqlite.Open(ctx, url, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s = store.New(d)
	} else {
		url, schema = testdb.PostgresSchema(t)
		d, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		s = store.New(d)
	}
	t.Cleanup(s.Close)
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s, url, schema
}

const crashGrace = 500 * time.Millisecond

// TestWorkerKilledMidJob SIGKILLs a worker process whose job has a child
// running: the child is gone within the kill grace (+1 s of slack), the
// reaper requeues the job and a second worker completes it.
func TestWorkerKilledMidJob(t *testing.T) {
	t.Parallel()
	testdb.RequireSandbox(t)
	s, url, schema := crashStore(t, "postgres")
	root := t.TempDir()
	h := &harness{t: t, store: s}
	var err error
	if h.cache, err = objectcache.NewFileCache(filepath.Join(root, "objects")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unsealAll(t, root) })
	h.putFixture("crash", "c-crash", nil)
	// The flag outlives the first run in a directory every job may write.
	if err := os.Mkdir(filepath.Join(root, "shared"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "shared"), 0o777); err != nil { // past the umask
		t.Fatal(err)
	}
	input, _ := json.Marshal(map[string]string{"flag": filepath.Join(root, "shared", "flag")})
	id := h.enqueue(job{commit: "c-crash", entry: "run.sh", runtime: "command", action: "run", input: string(input)})
	marks := newJobTree(id)
	t.Cleanup(func() { marks.signal(syscall.SIGKILL) })

	first := startHelper(t, url, schema, root)
	h.waitLogs(id, "started", 30*time.Second)
	waitMembers(t, marks, 2) // sh, sleep (and bwrap's two when sandboxed)
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	_ = first.Wait()
	assertTreeGone(t, marks, killedAt.Add(crashGrace+time.Second))

	reap(t, s)
	startHelper(t, url, schema, root)
	j := h.wait(id, 30*time.Second)
	if j.Status != spine.StatusSuccess || string(j.Result) != `{"second_run": true}` && string(j.Result) != `{"second_run":true}` {
		t.Fatalf("after the crash: %s %s %+v", j.Status, j.Result, j.Error)
	}
	if j.Restarts != 1 {
		t.Errorf("restarts %d, want 1", j.Restarts)
	}
}

// startHelper starts a helper worker process on Postgres, killed at
// cleanup; extra is more of its environment (envDriver).
func startHelper(t *testing.T, url, schema, root string, extra ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelper+"=1", envURL+"="+url, envSchema+"="+schema, envRoot+"="+root)
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// reap runs the reaper until it requeues the dead worker's job.
func reap(t *testing.T, s spine.Store) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := s.Reap(context.Background(), spine.ReapParams{ZombieTimeout: 300 * time.Millisecond, RestartLimit: 3, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Requeued) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the reaper never requeued the job")
		}
		time.Sleep(50 * time.Millisecond) // waiting for the ping to go stale
	}
}
