package source_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/internal/gittest"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/source"
)

// TestSyncGood syncs the example app: the catalog lists its apps at the
// pushed commit, and the cache holds the tree with its marker.
func TestSyncGood(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		_, commit := e.helloSource(t)

		res := e.sync(t)
		if res.Commit != commit || res.Unchanged || len(res.Apps) != 1 {
			t.Fatalf("sync = %+v, want commit %s with one app", res, commit)
		}
		apps := e.requireCatalogAt(t, commit)
		keys := []string{}
		for _, a := range apps[0].Actions {
			keys = append(keys, a.Key)
		}
		if apps[0].Key != "hello" || apps[0].Runtime != "bun" || strings.Join(keys, ",") != "fail,greet,sleep" {
			t.Fatalf("catalog = %+v (actions %v)", apps[0], keys)
		}
		if src := e.source(t); src.Error != "" || src.SyncedAt == nil {
			t.Fatalf("source = %+v", src)
		}
		files, err := e.cache.Get(t.Context(), e.key(commit))
		if err != nil {
			t.Fatalf("cache get: %v", err)
		}
		if !hasFile(files, "windforce.yaml") || !hasFile(files, "src/main.ts") || !hasFile(files, "schemas/greet.input.json") {
			t.Fatalf("cached tree lacks files: %v", paths(files))
		}
		if e.fileCache != nil {
			marker := filepath.Join(e.fileCache.Root(), ws, "main", commit, objectcache.Marker)
			if _, err := os.Stat(marker); err != nil {
				t.Fatalf("marker on disk: %v", err)
			}
		}
		if again := e.sync(t); !again.Unchanged || again.Commit != commit {
			t.Fatalf("second sync = %+v, want unchanged", again)
		}
	})
}

func hasFile(files []objectcache.File, p string) bool {
	for _, f := range files {
		if f.Path == p {
			return true
		}
	}
	return false
}

func paths(files []objectcache.File) []string {
	var ps []string
	for _, f := range files {
		ps = append(ps, f.Path)
	}
	return ps
}

// TestSyncBadCommit: a bad manifest, a missing schema or an escaping
// symbolic link fails with a clear message, recorded on the source; the
// catalog stays on the good commit and the bad tree is not cached.
func TestSyncBadCommit(t *testing.T) {
	cases := []struct {
		name   string
		change func(t *testing.T, r *gittest.Repo)
		want   string
	}{
		{"bad manifest", func(t *testing.T, r *gittest.Repo) {
			r.Write(t, map[string]string{"windforce.yaml": "apps:\n  hello:\n    entrypoint: src/main.ts\n    runtime: java\n    actions: {a: {}}\n"})
		}, `windforce.yaml: apps.hello.runtime: unknown runtime "java"`},
		{"missing schema", func(t *testing.T, r *gittest.Repo) {
			if err := os.Remove(filepath.Join(r.Work, "schemas", "greet.input.json")); err != nil {
				t.Fatal(err)
			}
		}, "apps.hello.actions.greet.input_schema: schema file schemas/greet.input.json does not exist"},
		{"escaping symlink", func(t *testing.T, r *gittest.Repo) {
			if err := os.Symlink("../../../../etc/passwd", filepath.Join(r.Work, "src", "passwd")); err != nil {
				t.Fatal(err)
			}
		}, "src/passwd: symbolic link points outside the repository"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, e *env) {
				r, good := e.helloSource(t)
				e.sync(t)

				c.change(t, r)
				bad := r.CommitPush(t, "bad")
				_, err := e.syncer.Sync(t.Context(), ws, "main")
				var se *source.SyncError
				if !errors.As(err, &se) || se.Step != source.StepValidate || !se.UserError() || se.Commit != bad {
					t.Fatalf("sync of bad commit: %v; want a validate *SyncError", err)
				}
				if !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %q does not contain %q", err, c.want)
				}
				e.requireCatalogAt(t, good)
				if src := e.source(t); !strings.Contains(src.Error, c.want) || !strings.HasPrefix(src.Error, "validate failed at commit") {
					t.Fatalf("source error %q does not explain %q", src.Error, c.want)
				}
				if ok, _ := e.cache.Has(t.Context(), e.key(bad)); ok {
					t.Fatal("a refused commit was written to the cache")
				}
			})
		})
	}
}

// TestSyncStoppedBeforeMarker: a sync whose cache write stops between the
// tree and the marker leaves the catalog on the old commit; the new
// commit's tree is invisible; the next sync completes it.
func TestSyncStoppedBeforeMarker(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		r, a := e.helloSource(t)
		e.sync(t)

		r.Write(t, map[string]string{"src/extra.ts": "export const x = 1;\n"})
		b := r.CommitPush(t, "B")
		crash := errors.New("simulated crash between tree and marker")
		e.cache.SetBeforeMarker(func(ctx context.Context, k objectcache.Key) error {
			// The tree is written, the marker is not: nothing names B yet.
			if ok, _ := e.cache.Has(ctx, k); ok {
				t.Error("tree complete before its marker")
			}
			return crash
		})
		_, err := e.syncer.Sync(t.Context(), ws, "main")
		var se *source.SyncError
		if !errors.As(err, &se) || se.Step != source.StepCache || !errors.Is(err, crash) {
			t.Fatalf("sync stopped before the marker: %v", err)
		}
		e.requireCatalogAt(t, a)
		if _, err := e.cache.Get(t.Context(), e.key(b)); !errors.Is(err, objectcache.ErrIncomplete) {
			t.Fatalf("reading the unmarked tree: %v; want ErrIncomplete", err)
		}
		if src := e.source(t); !strings.Contains(src.Error, "cache failed") {
			t.Fatalf("source error = %q", src.Error)
		}

		e.cache.SetBeforeMarker(nil)
		if res := e.sync(t); res.Commit != b {
			t.Fatalf("resync = %+v, want %s", res, b)
		}
		e.requireCatalogAt(t, b)
		if src := e.source(t); src.Error != "" {
			t.Fatalf("error not cleared: %q", src.Error)
		}
	})
}

// TestSyncConcurrent: two syncs of one source at once both succeed and
// agree; the tree is written once.
func TestSyncConcurrent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		_, commit := e.helloSource(t)
		var mu sync.Mutex
		writes := 0
		e.cache.SetBeforeMarker(func(context.Context, objectcache.Key) error {
			mu.Lock()
			writes++
			mu.Unlock()
			return nil
		})
		// A second Syncer plays another server: only the store's lock
		// serializes it with the first.
		other := &source.Syncer{Catalog: e.db, Cache: e.cache, AnyFileSource: true}
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			s := e.syncer
			if i%2 == 1 {
				s = other
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = s.Sync(t.Context(), ws, "main")
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("sync %d: %v", i, err)
			}
		}
		e.requireCatalogAt(t, commit)
		if writes != 1 {
			t.Fatalf("tree written %d times, want once", writes)
		}
	})
}

// TestSyncFetchError: an unreachable remote fails at fetch and is recorded.
func TestSyncFetchError(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		r := gittest.New(t)
		r.URL = "file://" + filepath.Join(t.TempDir(), "missing.git")
		e.addSource(t, r)
		_, err := e.syncer.Sync(t.Context(), ws, "main")
		var se *source.SyncError
		if !errors.As(err, &se) || se.Step != source.StepFetch || se.UserError() {
			t.Fatalf("sync of missing remote: %v", err)
		}
		if src := e.source(t); !strings.HasPrefix(src.Error, "fetch failed: git fetch:") {
			t.Fatalf("source error = %q", src.Error)
		}
		if _, err := e.syncer.Sync(t.Context(), ws, "nope"); !errors.Is(err, catalog.ErrNotFound) {
			t.Fatalf("sync of unknown source: %v", err)
		}
	})
}
