package objectcache_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/objectcache/cachetest"
)

func newFileCache(t *testing.T) *objectcache.FileCache {
	t.Helper()
	c, err := objectcache.NewFileCache(t.TempDir())
	if err != nil {
		t.Fatalf("new file cache: %v", err)
	}
	return c
}

// TestFileConformance runs the backend suite on the file cache.
func TestFileConformance(t *testing.T) {
	cachetest.Run(t, func(t *testing.T) cachetest.Cache { return newFileCache(t) })
}

// TestFileLeftoverWithoutMarker: a directory at the final path without a
// marker (left by a crashed older writer) is invisible and gets replaced.
func TestFileLeftoverWithoutMarker(t *testing.T) {
	t.Parallel()
	c := newFileCache(t)
	k := objectcache.Key{Workspace: "ws", Source: "src", Commit: "abc"}
	dir := filepath.Join(c.Root(), "ws", "src", "abc")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "half.txt"), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(t.Context(), k); err == nil {
		t.Fatal("Get of a tree without marker succeeded")
	} else if ie := err.(*objectcache.IncompleteError); !ie.Partial {
		t.Fatalf("leftover tree not reported partial: %v", err)
	}
	if _, err := c.Dir(t.Context(), k); err == nil {
		t.Fatal("Dir of a tree without marker succeeded")
	}
	files := []objectcache.File{{Path: "whole.txt", Mode: 0o644, Data: []byte("whole")}}
	if err := c.Put(t.Context(), k, files); err != nil {
		t.Fatalf("put over leftover: %v", err)
	}
	got, err := c.Get(t.Context(), k)
	if err != nil || len(got) != 1 || got[0].Path != "whole.txt" {
		t.Fatalf("after put over leftover: %v, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, objectcache.Marker)); err != nil {
		t.Fatalf("marker missing on disk: %v", err)
	}
}

// noCache is a database that keeps no trees (the store core on SQLite).
type noCache struct{}

func (noCache) ObjectCache() objectcache.Cache { return nil }

// TestOpen parses WINDFORCE_OBJECT_CACHE values.
func TestOpen(t *testing.T) {
	t.Parallel()
	c, err := objectcache.Open("file://"+t.TempDir(), nil)
	if err != nil {
		t.Fatalf("open file cache: %v", err)
	}
	if _, ok := c.(*objectcache.FileCache); !ok {
		t.Fatalf("file:// opened a %T", c)
	}
	for _, spec := range []string{"postgres", "s3://bucket", "file://", ""} {
		if _, err := objectcache.Open(spec, noCache{}); err == nil {
			t.Errorf("Open(%q) with no Postgres store succeeded", spec)
		}
	}
}
