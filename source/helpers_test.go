package source_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/internal/gittest"
	"github.com/windforce/windforce/internal/teststore"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/objectcache/cachetest"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/spine"
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
		s := teststore.SQLite(t)
		c, err := objectcache.NewFileCache(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		fn(t, newEnv(s, c, c))
	})
	t.Run("postgres+db", func(t *testing.T) {
		t.Parallel()
		s := teststore.Postgres(t, 6)
		fn(t, newEnv(s, teststore.PostgresCache(t, s), nil))
	})
}

func newEnv(d db, c cachetest.Cache, fc *objectcache.FileCache) *env {
	return &env{db: d, cache: c, fileCache: fc, syncer: &source.Syncer{Catalog: d, Cache: c, AnyFileSource: true}}
}

// addSource registers repo's remote as source "main".
// helloSource pushes examples/hello as the first commit of a new repo and
// adds that repo as the source "main"; it returns the repo and the commit.
func (e *env) helloSource(t *testing.T) (*gittest.Repo, string) {
	t.Helper()
	r := gittest.New(t)
	r.CopyDir(t, gittest.Example("hello"))
	commit := r.CommitPush(t, "A")
	e.addSource(t, r)
	return r, commit
}

func (e *env) addSource(t *testing.T, r *gittest.Repo) {
	t.Helper()
	if err := e.syncer.AddSource(t.Context(), catalog.Source{Workspace: ws, ID: "main", URL: r.URL, Branch: "main"}); err != nil {
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
