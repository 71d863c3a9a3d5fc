// Package cachetest is the conformance suite every objectcache.Cache
// backend runs: the same round trips, marker-last and no-rewrite rules on
// the file cache and on the Postgres cache.
//
//	func TestConformance(t *testing.T) {
//		cachetest.Run(t, func(t *testing.T) cachetest.Cache { return newIsolatedCache(t) })
//	}
package cachetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"testing"

	"github.com/windforce/windforce/objectcache"
)

// Cache is a backend under test: a cache whose marker hook the suite can
// set.
type Cache interface {
	objectcache.Cache
	SetBeforeMarker(fn objectcache.BeforeMarkerFunc)
}

// Run runs the suite. newCache must return an empty cache of its own
// (its own directory or schema), cleaned up with t.
func Run(t *testing.T, newCache func(t *testing.T) Cache) {
	t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, newCache) })
	t.Run("Missing", func(t *testing.T) { testMissing(t, newCache) })
	t.Run("MarkerLast", func(t *testing.T) { testMarkerLast(t, newCache) })
	t.Run("NoRewrite", func(t *testing.T) { testNoRewrite(t, newCache) })
	t.Run("ConcurrentPut", func(t *testing.T) { testConcurrentPut(t, newCache) })
	t.Run("Refuses", func(t *testing.T) { testRefuses(t, newCache) })
	t.Run("KeysIsolated", func(t *testing.T) { testKeysIsolated(t, newCache) })
}

var key = objectcache.Key{Workspace: "ws", Source: "src", Commit: "0123456789abcdef0123456789abcdef01234567"}

// sampleTree has nested paths, an executable, an empty file, binary data,
// a file larger than any chunk size, and a symbolic link.
func sampleTree() []objectcache.File {
	big := bytes.Repeat([]byte("0123456789abcdef"), 40_000) // 640 KB
	return []objectcache.File{
		{Path: "windforce.yaml", Mode: 0o644, Data: []byte("apps: {}\n")},
		{Path: "bin/run.sh", Mode: 0o755, Data: []byte("#!/bin/sh\necho hi\n")},
		{Path: "empty.txt", Mode: 0o644, Data: []byte{}},
		{Path: "data/blob.bin", Mode: 0o644, Data: []byte{0, 1, 2, 255, 254, '\n', 0}},
		{Path: "data/big.txt", Mode: 0o644, Data: big},
		{Path: "src/link.ts", Mode: fs.ModeSymlink | 0o777, Data: []byte("../bin/run.sh")},
	}
}

func put(t *testing.T, c objectcache.Cache, k objectcache.Key, files []objectcache.File) {
	t.Helper()
	if err := c.Put(t.Context(), k, files); err != nil {
		t.Fatalf("put %s: %v", k, err)
	}
}

// requireTree fails unless Get returns exactly want (order by path).
func requireTree(t *testing.T, c objectcache.Cache, k objectcache.Key, want []objectcache.File) {
	t.Helper()
	got, err := c.Get(t.Context(), k)
	if err != nil {
		t.Fatalf("get %s: %v", k, err)
	}
	if err := sameTree(got, want); err != nil {
		t.Fatalf("get %s: %v", k, err)
	}
}

func sameTree(got, want []objectcache.File) error {
	byPath := map[string]objectcache.File{}
	for _, f := range want {
		byPath[f.Path] = f
	}
	if len(got) != len(want) {
		return fmt.Errorf("got %d files, want %d", len(got), len(want))
	}
	for i, g := range got {
		if i > 0 && got[i-1].Path >= g.Path {
			return fmt.Errorf("files not sorted by path: %q before %q", got[i-1].Path, g.Path)
		}
		w, ok := byPath[g.Path]
		if !ok {
			return fmt.Errorf("unexpected file %q", g.Path)
		}
		if g.Mode != w.Mode {
			return fmt.Errorf("%s: mode %v, want %v", g.Path, g.Mode, w.Mode)
		}
		if !bytes.Equal(g.Data, w.Data) {
			return fmt.Errorf("%s: %d bytes differ from the %d written", g.Path, len(g.Data), len(w.Data))
		}
	}
	return nil
}

// requireIncomplete fails unless the tree is invisible to readers.
func requireIncomplete(t *testing.T, ctx context.Context, c objectcache.Cache, k objectcache.Key) *objectcache.IncompleteError {
	t.Helper()
	if ok, err := c.Has(ctx, k); err != nil || ok {
		t.Fatalf("Has(%s) = %v, %v; want false, nil", k, ok, err)
	}
	files, err := c.Get(ctx, k)
	var ie *objectcache.IncompleteError
	if !errors.As(err, &ie) || !errors.Is(err, objectcache.ErrIncomplete) {
		t.Fatalf("Get(%s) = %d files, %v; want an *IncompleteError", k, len(files), err)
	}
	return ie
}

func testRoundTrip(t *testing.T, newCache func(t *testing.T) Cache) {
	t.Parallel()
	c := newCache(t)
	put(t, c, key, sampleTree())
	if ok, err := c.Has(t.Context(), key); err != nil || !ok {
		t.Fatalf("Has after Put = %v, %v; want true", ok, err)
	}
	requireTree(t, c, key, sampleTree())
}

func testMissing(t *testing.T, newCache func(t *testing.T) Cache) {
	t.Parallel()
	c := newCache(t)
	if ie := requireIncomplete(t, t.Context(), c, key); ie.Partial {
		t.Fatalf("a tree never written reads as partial: %v", ie)
	}
}

// testMarkerLast stops a write between the files and the marker: while
// stopped and afterwards the tree is invisible; a later Put completes it.
func testMarkerLast(t *testing.T, newCache func(t *testing.T) Cache) {
	t.Parallel()
	c := newCache(t)
	crash := errors.New("simulated crash before the marker")
	c.SetBeforeMarker(func(ctx context.Context, k objectcache.Key) error {
		requireIncomplete(t, ctx, c, k) // every file is written, no marker yet
		return crash
	})
	if err := c.Put(t.Context(), key, sampleTree()); !errors.Is(err, crash) {
		t.Fatalf("Put stopped before the marker returned %v; want the hook's error", err)
	}
	requireIncomplete(t, t.Context(), c, key)

	c.SetBeforeMarker(nil)
	put(t, c, key, sampleTree())
	requireTree(t, c, key, sampleTree())
}

// testNoRewrite checks that a complete commit is never written again.
func testNoRewrite(t *testing.T, newCache func(t *testing.T) Cache) {
	t.Parallel()
	c := newCache(t)
	put(t, c, key, sampleTree())
	calls := 0
	c.SetBeforeMarker(func(context.Context, objectcache.Key) error { calls++; return nil })
	put(t, c, key, []objectcache.File{{Path: "other.txt", Mode: 0o644, Data: []byte("x")}})
	if calls != 0 {
		t.Fatalf("Put of a complete commit wrote a tree again (%d hook calls)", calls)
	}
	requireTree(t, c, key, sampleTree())
}

func testConcurrentPut(t *testing.T, newCache func(t *testing.T) Cache) {
	t.Parallel()
	c := newCache(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Put(t.Context(), key, sampleTree())
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent Put %d: %v", i, err)
		}
	}
	requireTree(t, c, key, sampleTree())
}

func testRefuses(t *testing.T, newCache func(t *testing.T) Cache) {
	t.Parallel()
	c := newCache(t)
	badKeys := []objectcache.Key{
		{Workspace: "..", Source: "s", Commit: "c"},
		{Workspace: "w", Source: "a/b", Commit: "c"},
		{Workspace: "w", Source: "s", Commit: ""},
	}
	for _, k := range badKeys {
		if err := c.Put(t.Context(), k, nil); err == nil {
			t.Errorf("Put with key %q succeeded", k)
		}
	}
	badTrees := map[string][]objectcache.File{
		"escaping path": {{Path: "../x", Data: []byte("x")}},
		"absolute path": {{Path: "/etc/x", Data: []byte("x")}},
		"duplicate":     {{Path: "a", Data: nil}, {Path: "a", Data: nil}},
		"marker":        {{Path: objectcache.Marker, Data: nil}},
	}
	for name, files := range badTrees {
		if err := c.Put(t.Context(), key, files); err == nil {
			t.Errorf("Put of a tree with %s succeeded", name)
		}
	}
	requireIncomplete(t, t.Context(), c, key)
}

func testKeysIsolated(t *testing.T, newCache func(t *testing.T) Cache) {
	t.Parallel()
	c := newCache(t)
	other := key
	other.Source = "src2"
	a := []objectcache.File{{Path: "a.txt", Mode: 0o644, Data: []byte("a")}}
	b := []objectcache.File{{Path: "b.txt", Mode: 0o755, Data: []byte("b")}}
	put(t, c, key, a)
	requireIncomplete(t, t.Context(), c, other)
	put(t, c, other, b)
	requireTree(t, c, key, a)
	requireTree(t, c, other, b)
}
