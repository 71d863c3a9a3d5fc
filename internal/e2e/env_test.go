package e2e_test

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/runner"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store"
	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

// db is a store holding both the catalog and the queue spine.
type db = *store.Store

// world is one backend pairing with a runner-backed worker serving it.
type world struct {
	db    db
	cache objectcache.Cache
}

// forEachPairing runs fn, in parallel, once on SQLite + file:// cache and
// once on Postgres (testdb) + postgres cache.
func forEachPairing(t *testing.T, fn func(t *testing.T, w *world)) {
	t.Run("sqlite+file", func(t *testing.T) {
		t.Parallel()
		s, err := sqlite.Open(t.Context(), testdb.SQLitePath(t), sqlite.Options{Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		fn(t, newWorld(t, store.New(s), "file://"+filepath.Join(t.TempDir(), "objects")))
	})
	t.Run("postgres+postgres", func(t *testing.T) {
		t.Parallel()
		url, schema := testdb.PostgresSchema(t)
		s, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema, MaxConns: 8, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		fn(t, newWorld(t, store.New(s), "postgres"))
	})
}

// newWorld migrates d and opens the object cache spec names through
// objectcache.Open, as the binary does.
func newWorld(t *testing.T, d db, cacheSpec string) *world {
	t.Helper()
	if err := d.Migrate(t.Context()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	c, err := objectcache.Open(cacheSpec, d)
	if err != nil {
		t.Fatalf("open object cache %q: %v", cacheSpec, err)
	}
	return &world{db: d, cache: c}
}

// startWorker starts a spine.Worker whose handler is a real runner with
// bun; both stop at cleanup. Timings are short so the test stays fast.
// opts adjust the runner's configuration; the runner is returned.
func (w *world) startWorker(t *testing.T, bun string, opts ...func(*runner.Config)) *runner.Runner {
	testdb.RequireSandbox(t)
	t.Helper()
	dir := filepath.Join(t.TempDir(), "wf")
	cfg := runner.Config{Store: w.db, Cache: w.cache, Dir: dir,
		Secret: []byte("e2e-secret"), URL: "http://127.0.0.1:1",
		Runtimes: map[string]string{"bun": bun}, KillGrace: 500 * time.Millisecond,
		LogFlushInterval: 50 * time.Millisecond, Logger: quietLogger()}
	for _, o := range opts {
		o(&cfg)
	}
	r, err := runner.New(cfg)
	if err != nil {
		t.Fatalf("runner: %v", err)
	}
	t.Cleanup(func() { unseal(dir); r.Close() })
	w.serve(t, r, spine.DefaultTag)
	return r
}

// serve starts a spine.Worker on tags whose handler is r; it stops at
// cleanup, before r closes (cleanups run last in, first out).
func (w *world) serve(t *testing.T, r *runner.Runner, tags ...string) {
	t.Helper()
	wk, err := spine.NewWorker(spine.WorkerConfig{Store: w.db, Handler: r.Handle, Concurrency: 4, Tags: tags,
		Heartbeat: 100 * time.Millisecond, PollInterval: 100 * time.Millisecond,
		DrainGrace: 2 * time.Second, Logger: quietLogger()})
	if err != nil {
		t.Fatalf("worker: %v", err)
	}
	if err := wk.Start(context.Background()); err != nil {
		t.Fatalf("start worker: %v", err)
	}
	t.Cleanup(wk.Stop)
}

// requireBun returns bun's path; when bun is missing it skips loudly, or
// fails when WINDFORCE_TEST_REQUIRE_BUN=1.
func requireBun(t *testing.T) string {
	t.Helper()
	const preferred = "/usr/bin/bun"
	if _, err := os.Stat(preferred); err == nil {
		return preferred
	}
	p, err := exec.LookPath("bun")
	if err != nil {
		testdb.Unavailable(t, "WINDFORCE_TEST_REQUIRE_BUN", "bun", err)
	}
	return p
}

// unseal makes the runner's read-only commit copies writable again so
// t.TempDir can remove them.
func unseal(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
}

// quietLogger shows warnings and errors only.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
