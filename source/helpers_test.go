package source_test

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/objectcache/cachetest"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const ws = "ws"

// db is a store with the catalog and the spine.
type db interface {
	catalog.Store
	spine.Store
}

// env is one backend pairing: SQLite with the file cache, or Postgres with
// the database cache.
type env struct {
	db        db
	cache     cachetest.Cache
	syncer    *source.Syncer
	fileCache *objectcache.FileCache // nil on Postgres
}

// forEachBackend runs fn once per backend pairing, in parallel.
func forEachBackend(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Run("sqlite+file", func(t *testing.T) {
		t.Parallel()
		s, err := sqlite.Open(t.Context(), testdb.SQLitePath(t), sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		if err := s.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		c, err := objectcache.NewFileCache(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		fn(t, newEnv(s, c, c))
	})
	t.Run("postgres+db", func(t *testing.T) {
		t.Parallel()
		url, schema := testdb.PostgresSchema(t)
		s, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema, MaxConns: 6})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		if err := s.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		fn(t, newEnv(s, s.ObjectCache().(*postgres.ObjectCache), nil))
	})
}

func newEnv(d db, c cachetest.Cache, fc *objectcache.FileCache) *env {
	return &env{db: d, cache: c, fileCache: fc, syncer: &source.Syncer{Catalog: d, Cache: c}}
}

// addSource registers repo's remote as source "main".
func (e *env) addSource(t *testing.T, r *repo) {
	t.Helper()
	if err := e.syncer.AddSource(t.Context(), catalog.Source{Workspace: ws, ID: "main", URL: r.url, Branch: "main"}); err != nil {
		t.Fatalf("add source: %v", err)
	}
}

func (e *env) sync(t *testing.T) source.Result {
	t.Helper()
	res, err := e.syncer.Sync(t.Context(), ws, "main")
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	return res
}

func (e *env) source(t *testing.T) catalog.Source {
	t.Helper()
	src, err := e.db.GetSource(t.Context(), ws, "main")
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// requireCatalogAt fails unless every app of the workspace names commit.
func (e *env) requireCatalogAt(t *testing.T, commit string) []catalog.App {
	t.Helper()
	apps, err := e.db.ListApps(t.Context(), ws)
	if err != nil {
		t.Fatal(err)
	}
	if len(apps) == 0 {
		t.Fatalf("catalog is empty, want commit %.12s", commit)
	}
	for _, a := range apps {
		if a.CommitSHA != commit {
			t.Fatalf("app %s at %.12s, want %.12s", a.Key, a.CommitSHA, commit)
		}
	}
	if src := e.source(t); src.Commit != commit {
		t.Fatalf("source at %.12s, want %.12s", src.Commit, commit)
	}
	return apps
}

func (e *env) key(commit string) objectcache.Key {
	return objectcache.Key{Workspace: ws, Source: "main", Commit: commit}
}

// repo is a bare remote plus a working clone that commits and pushes.
type repo struct {
	url  string
	bare string
	work string
}

// gitEnv gives test commits an identity and ignores the machine's config,
// so the tests run the same on a fresh CI machine.
func gitEnv() []string {
	return append(os.Environ(),
		"GIT_AUTHOR_NAME=windforce-test", "GIT_AUTHOR_EMAIL=test@windforce.invalid",
		"GIT_COMMITTER_NAME=windforce-test", "GIT_COMMITTER_EMAIL=test@windforce.invalid",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), "git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	dir := t.TempDir()
	r := &repo{bare: filepath.Join(dir, "remote.git"), work: filepath.Join(dir, "work")}
	git(t, dir, "init", "-q", "--bare", "-b", "main", r.bare)
	git(t, dir, "init", "-q", "-b", "main", r.work)
	git(t, r.work, "remote", "add", "origin", r.bare)
	r.url = "file://" + r.bare
	return r
}

// write writes files (slash paths) in the working clone.
func (r *repo) write(t *testing.T, files map[string]string) {
	t.Helper()
	for p, data := range files {
		full := filepath.Join(r.work, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// commitPush commits everything and pushes; it returns the commit.
func (r *repo) commitPush(t *testing.T, msg string) string {
	t.Helper()
	git(t, r.work, "add", "-A")
	git(t, r.work, "commit", "-q", "--allow-empty", "-m", msg)
	git(t, r.work, "push", "-q", "origin", "HEAD:refs/heads/main")
	return git(t, r.work, "rev-parse", "HEAD")
}

// writeExample copies examples/hello into the working clone.
func (r *repo) writeExample(t *testing.T) {
	t.Helper()
	src := filepath.Join("..", "examples", "hello")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		r.write(t, map[string]string{filepath.ToSlash(rel): string(data)})
		return nil
	})
	if err != nil {
		t.Fatalf("copy example: %v", err)
	}
}
