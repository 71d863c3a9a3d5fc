package store

import (
	"errors"
	"testing"
	"time"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// TestCatalogMessages: the catalog's errors read the same on both
// databases (they are built once, in the core). Before the core, a
// missing source's RecordSyncError carried a "record sync error of"
// prefix on SQLite only; the Postgres text is kept.
func TestCatalogMessages(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		const ws = "ws-msg"
		check := func(what string, err, target error, want string) {
			t.Helper()
			if !errors.Is(err, target) || err.Error() != want {
				t.Errorf("%s = %v, want %q (matching %v)", what, err, want, target)
			}
		}
		check("RecordSyncError(missing)", s.RecordSyncError(ctx, ws, "nope", "boom"), catalog.ErrNotFound,
			`not found in catalog: source "nope" in workspace "ws-msg"`)
		_, err := s.GetSource(ctx, ws, "nope")
		check("GetSource(missing)", err, catalog.ErrNotFound, `not found in catalog: source "nope" in workspace "ws-msg"`)
		check("ApplySync(missing)", s.ApplySync(ctx, catalog.SyncParams{Workspace: ws, SourceID: "nope", Commit: "c1"}),
			catalog.ErrNotFound, `apply sync of ws-msg/nope at c1: not found in catalog: source "nope" in workspace "ws-msg"`)
		_, err = s.GetApp(ctx, ws, "")
		check(`GetApp("")`, err, catalog.ErrNotFound, `not found in catalog: app "" in workspace "ws-msg"`)

		for _, id := range []string{"one", "two"} {
			if err := s.PutSource(ctx, catalog.Source{Workspace: ws, ID: id, URL: "file:///" + id + ".git", Branch: "main"}); err != nil {
				t.Fatal(err)
			}
		}
		apps := []catalog.App{
			{Key: "a", Entrypoint: "a.py", Runtime: "python", Timeout: time.Minute, Tag: "default", Retry: spine.DefaultRetry},
			{Key: "b", Entrypoint: "b.py", Runtime: "python", Timeout: time.Minute, Tag: "default", Retry: spine.DefaultRetry},
		}
		if err := s.ApplySync(ctx, catalog.SyncParams{Workspace: ws, SourceID: "one", Commit: "c1", Apps: apps}); err != nil {
			t.Fatal(err)
		}
		// Source two taking both keys is refused, naming every owner, and
		// changes nothing.
		check("ApplySync(taken keys)", s.ApplySync(ctx, catalog.SyncParams{Workspace: ws, SourceID: "two", Commit: "c2", Apps: apps}),
			catalog.ErrConflict, `apply sync of ws-msg/two at c2: catalog conflict: app "a" belongs to source "one"; app "b" belongs to source "one"`)
		got, err := s.ListApps(ctx, ws)
		if err != nil || len(got) != 2 || got[0].SourceID != "one" || got[1].SourceID != "one" {
			t.Fatalf("after a refused sync: %+v, %v; want a and b of source one", got, err)
		}
		if src, err := s.GetSource(ctx, ws, "two"); err != nil || src.Commit != "" {
			t.Fatalf("source two after a refused sync: %+v, %v; want no commit", src, err)
		}
	})
}

// TestApplySyncOneTime: a sync on the database's clock (zero Now) stamps
// its apps and its source with one time, as one transaction's now() does on
// Postgres.
func TestApplySyncOneTime(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		if err := s.PutSource(ctx, catalog.Source{Workspace: "ws", ID: "src", URL: "file:///src.git", Branch: "main"}); err != nil {
			t.Fatal(err)
		}
		var apps []catalog.App
		for _, k := range []string{"a", "b", "c"} {
			apps = append(apps, catalog.App{Key: k, Entrypoint: k + ".py", Runtime: "python", Timeout: time.Minute,
				Tag: "default", Retry: spine.DefaultRetry})
		}
		if err := s.ApplySync(ctx, catalog.SyncParams{Workspace: "ws", SourceID: "src", Commit: "c1", Apps: apps}); err != nil {
			t.Fatal(err)
		}
		src, err := s.GetSource(ctx, "ws", "src")
		if err != nil || src.SyncedAt == nil {
			t.Fatalf("source after sync: %+v, %v", src, err)
		}
		got, err := s.ListApps(ctx, "ws")
		if err != nil || len(got) != 3 {
			t.Fatalf("apps: %d, %v", len(got), err)
		}
		for _, a := range got {
			if !a.UpdatedAt.Equal(*src.SyncedAt) {
				t.Errorf("app %s updated at %v, source synced at %v: want one time", a.Key, a.UpdatedAt, *src.SyncedAt)
			}
		}
	})
}
