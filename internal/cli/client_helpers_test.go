package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/windforce/windforce/internal/apitest"
	"github.com/windforce/windforce/server"
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
	t   *testing.T
	api *apitest.Env
	db  server.Store
	url string
}

// forEachBackend runs fn on SQLite and on Postgres, in parallel; each env
// syncs examples/hello through the CLI itself.
func forEachBackend(t *testing.T, fn func(t *testing.T, e *apiEnv)) {
	opts := apitest.Options{Workspace: testWS, Secret: testSecret, AdminToken: testAdminToken,
		MaxInputBytes: 1 << 16, NoSource: true}
	apitest.ForEachBackend(t, opts, func(t *testing.T, a *apitest.Env) {
		e := &apiEnv{t: t, api: a, db: a.DB, url: a.URL}
		e.mustRun("sources", "add", "main", a.Repo.URL)
		e.mustRun("sources", "sync", "main")
		fn(t, e)
	})
}

// startWorker runs a runner-backed worker in-process; it skips loudly
// without bun (fails with WINDFORCE_TEST_REQUIRE_BUN=1).
func (e *apiEnv) startWorker() {
	e.t.Helper()
	apitest.StartWorker(e.t, e.api, "bun", apitest.WorkerOptions{Name: "cli-test-worker", Heartbeat: 200 * time.Millisecond})
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
