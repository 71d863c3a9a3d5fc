package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/windforce/windforce/internal/gittest"
	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/runner"
	"github.com/windforce/windforce/server"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

const (
	testAdminToken = "cli-test-admin-token"
	// testWS is the workspace `windforce dev` uses, so the client's
	// default is exercised too.
	testWS = DefaultWorkspace
)

var testSecret = []byte("cli-test-secret")

// apiEnv is a real API (httptest) over a real store with examples/hello
// synced as source "main" of workspace "default".
type apiEnv struct {
	t     *testing.T
	db    server.Store
	cache objectcache.Cache
	url   string
}

// forEachBackend runs fn on SQLite and on Postgres, in parallel.
func forEachBackend(t *testing.T, fn func(t *testing.T, e *apiEnv)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		s, err := sqlite.Open(t.Context(), testdb.SQLitePath(t), sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		c, err := objectcache.NewFileCache(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		fn(t, newAPIEnv(t, s, c))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		url, schema := testdb.PostgresSchema(t)
		s, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema, MaxConns: 6, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		fn(t, newAPIEnv(t, s, s.ObjectCache()))
	})
}

// newAPIEnv migrates s, serves the API and syncs examples/hello through
// the CLI itself.
func newAPIEnv(t *testing.T, s server.Store, c objectcache.Cache) *apiEnv {
	t.Helper()
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	api, err := server.New(server.Config{Store: s, Syncer: &source.Syncer{Catalog: s, Cache: c, Logger: log},
		Secret: testSecret, AdminToken: testAdminToken, MaxInputBytes: 1 << 16, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(api.Handler())
	t.Cleanup(hs.Close)
	e := &apiEnv{t: t, db: s, cache: c, url: hs.URL}
	repo := gittest.New(t)
	repo.CopyDir(t, gittest.Example("hello"))
	repo.CommitPush(t, "example")
	e.mustRun("sources", "add", "main", repo.URL)
	e.mustRun("sources", "sync", "main")
	return e
}

// startWorker runs a runner-backed worker in-process; it skips loudly
// without bun (fails with WINDFORCE_TEST_REQUIRE_BUN=1).
func (e *apiEnv) startWorker() {
	t := e.t
	t.Helper()
	if _, err := exec.LookPath("bun"); err != nil {
		testdb.Unavailable(t, "WINDFORCE_TEST_REQUIRE_BUN", "bun", err)
	}
	log := slog.New(slog.DiscardHandler)
	r, err := runner.New(runner.Config{Store: e.db, Cache: e.cache, Dir: filepath.Join(t.TempDir(), "wf"),
		KillGrace: runner.DefaultKillGrace, MaxResultBytes: 1 << 20, MaxLogBytes: 1 << 20, Secret: testSecret, URL: e.url, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	w, err := spine.NewWorker(spine.WorkerConfig{Store: e.db, Handler: r.Handle, Name: "cli-test-worker",
		Tags: []string{spine.DefaultTag}, Concurrency: 2, Heartbeat: 200 * time.Millisecond, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
}

// cmdResult is what one command printed and returned.
type cmdResult struct {
	stdout, stderr string
	err            error
}

// run runs a client command against the env with the admin token unless
// args set --token themselves.
func (e *apiEnv) run(args ...string) cmdResult {
	e.t.Helper()
	return e.runIO(context.Background(), &bytes.Buffer{}, args...)
}

// runIO is run with a caller-owned stderr (to watch it while it runs).
func (e *apiEnv) runIO(ctx context.Context, stderr interface {
	Write([]byte) (int, error)
	String() string
}, args ...string) cmdResult {
	full := append([]string{}, args...)
	full = append(full, "--url", e.url, "--workspace", testWS)
	if !contains(args, "--token") {
		full = append(full, "--token", testAdminToken)
	}
	var out bytes.Buffer
	err := Run(ctx, full, &out, stderr)
	return cmdResult{stdout: out.String(), stderr: stderr.String(), err: err}
}

// mustRun fails the test unless the command succeeds.
func (e *apiEnv) mustRun(args ...string) cmdResult {
	e.t.Helper()
	r := e.run(args...)
	if r.err != nil {
		e.t.Fatalf("windforce %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.err, r.stdout, r.stderr)
	}
	return r
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// obj decodes a JSON object printed by a command.
func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("output %q is not one JSON object: %v", s, err)
	}
	return v
}

// syncBuffer is a bytes.Buffer safe to read while a command writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond) // polling with a deadline, not waiting for an event blindly
	}
}
