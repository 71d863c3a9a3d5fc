package objectcache_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/windforce/windforce/objectcache"
)

// TestMaterialize copies a complete tree to a local directory, marker
// included, once, even with many callers at once; an incomplete tree is
// refused and nothing is written.
func TestMaterialize(t *testing.T) {
	t.Parallel()
	c := newFileCache(t)
	k := objectcache.Key{Workspace: "ws", Source: "src", Commit: "abc"}
	files := []objectcache.File{
		{Path: "bin/run", Mode: 0o755, Data: []byte("#!/bin/sh\n")},
		{Path: "link", Mode: fs.ModeSymlink | 0o777, Data: []byte("bin/run")},
	}
	dir := filepath.Join(t.TempDir(), "commits", "abc")

	c.SetBeforeMarker(func(context.Context, objectcache.Key) error { return errors.New("stop") })
	_ = c.Put(t.Context(), k, files)
	if err := objectcache.Materialize(t.Context(), c, k, dir); !errors.Is(err, objectcache.ErrIncomplete) {
		t.Fatalf("materialize of an incomplete tree: %v", err)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("incomplete tree left %s: %v", dir, err)
	}

	c.SetBeforeMarker(nil)
	if err := c.Put(t.Context(), k, files); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := objectcache.Materialize(t.Context(), c, k, dir); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, p := range []string{objectcache.Marker, "bin/run"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Fatalf("materialized %s: %v", p, err)
		}
	}
	if fi, _ := os.Stat(filepath.Join(dir, "bin/run")); fi.Mode().Perm() != 0o755 {
		t.Fatalf("mode = %v", fi.Mode())
	}
	if target, _ := os.Readlink(filepath.Join(dir, "link")); target != "bin/run" {
		t.Fatalf("link = %q", target)
	}
}
