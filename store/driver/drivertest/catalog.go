package drivertest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

var _ = register("Catalog", testCatalog)

const (
	catWS   = "ws-drv"
	commitA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	commitB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// catApp is an app whose first action overrides everything and whose
// second overrides nothing.
func catApp(key string) catalog.App {
	return catalog.App{
		Key: key, Entrypoint: "main.py", Runtime: "python", Timeout: time.Minute, Tag: "default",
		Retry: spine.DefaultRetry, Limits: spine.Limits{Memory: 256 << 20},
		Actions: []catalog.Action{
			{Key: "a", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"string"}`),
				Timeout: 5 * time.Second, Tag: "gpu", Retry: &spine.RetryPolicy{MaxAttempts: 2, Backoff: time.Second, Factor: 3},
				Limits: spine.Limits{Memory: 1 << 30, Pids: 8, CPU: 0.5}},
			{Key: "b"},
		},
	}
}

// putSource creates source id of catWS, failing the test on an error.
func putSource(t *testing.T, ex driver.Executor, id string) {
	t.Helper()
	if err := ex.CatalogPutSource(t.Context(), catalog.Source{Workspace: catWS, ID: id, URL: "file:///" + id + ".git", Branch: "main"}); err != nil {
		t.Fatalf("CatalogPutSource(%s): %v", id, err)
	}
}

// insertApps writes apps as source id's at commit, in one transaction.
func insertApps(t *testing.T, ex driver.Executor, id, commit string, apps ...catalog.App) {
	t.Helper()
	err := ex.Tx(t.Context(), func(ex driver.Executor) error {
		return ex.CatalogInsertApps(t.Context(), catalog.SyncParams{Workspace: catWS, SourceID: id, Commit: commit, Apps: apps})
	})
	if err != nil {
		t.Fatalf("CatalogInsertApps(%s): %v", id, err)
	}
}

func testCatalog(t *testing.T, open Open) {
	t.Run("Sources", func(t *testing.T) { testCatalogSources(t, open) })
	t.Run("SyncError", func(t *testing.T) { testCatalogSyncError(t, open) })
	t.Run("SetHookSecret", func(t *testing.T) { testCatalogSetHookSecret(t, open) })
	t.Run("LockSource", func(t *testing.T) { testCatalogLockSource(t, open) })
	t.Run("ApplyLock", func(t *testing.T) { testCatalogApplyLock(t, open) })
	t.Run("AppOwners", func(t *testing.T) { testCatalogAppOwners(t, open) })
	t.Run("InsertListDelete", func(t *testing.T) { testCatalogInsertListDelete(t, open) })
	t.Run("InsertInvalid", func(t *testing.T) { testCatalogInsertInvalid(t, open) })
	t.Run("ResolveAction", func(t *testing.T) { testCatalogResolveAction(t, open) })
}

func testCatalogSources(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	ctx := t.Context()
	if _, err := ex.CatalogGetSource(ctx, catWS, "main"); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("CatalogGetSource(missing) = %v, want catalog.ErrNotFound", err)
	}
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := ex.CatalogPutSource(ctx, catalog.Source{Workspace: catWS, ID: "main", URL: "file:///a.git", Branch: "main", CreatedAt: created}); err != nil {
		t.Fatal(err)
	}
	if err := ex.CatalogSourceSynced(ctx, catWS, "main", commitA, time.Time{}); err != nil {
		t.Fatalf("CatalogSourceSynced: %v", err)
	}
	// A second put changes URL and branch and keeps the sync state.
	if err := ex.CatalogPutSource(ctx, catalog.Source{Workspace: catWS, ID: "main", URL: "file:///b.git", Branch: "dev"}); err != nil {
		t.Fatal(err)
	}
	src, err := ex.CatalogGetSource(ctx, catWS, "main")
	if err != nil {
		t.Fatal(err)
	}
	if src.URL != "file:///b.git" || src.Branch != "dev" || src.Commit != commitA || src.SyncedAt == nil || !src.CreatedAt.Equal(created) {
		t.Fatalf("source after a second put = %+v, want the new URL and branch, commit A kept, created %v", src, created)
	}
	if err := ex.CatalogPutSource(ctx, catalog.Source{Workspace: "other", ID: "x", URL: "file:///x.git", Branch: "main"}); err != nil {
		t.Fatal(err)
	}
	all, err := ex.CatalogListSources(ctx, "")
	if err != nil || len(all) != 2 || all[0].Workspace != "other" || all[1].Workspace != catWS {
		t.Fatalf("CatalogListSources(\"\") = %+v, %v; want other/x then %s/main", all, err, catWS)
	}
	one, err := ex.CatalogListSources(ctx, catWS)
	if err != nil || len(one) != 1 || one[0].ID != "main" {
		t.Fatalf("CatalogListSources(%s) = %+v, %v; want main only", catWS, one, err)
	}
}

// testCatalogSetHookSecret: the op writes only the secret, reports a
// missing source by ok, and a put without a secret keeps it.
func testCatalogSetHookSecret(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	ctx := t.Context()
	if ok, err := ex.CatalogSetHookSecret(ctx, catWS, "main", "s3cret-s3cret-s3cret"); err != nil || ok {
		t.Fatalf("CatalogSetHookSecret(missing) = %v, %v; want false, nil", ok, err)
	}
	putSource(t, ex, "main")
	if err := ex.CatalogSourceSynced(ctx, catWS, "main", commitA, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if ok, err := ex.CatalogSetHookSecret(ctx, catWS, "main", "s3cret-s3cret-s3cret"); err != nil || !ok {
		t.Fatalf("CatalogSetHookSecret = %v, %v; want true, nil", ok, err)
	}
	putSource(t, ex, "main") // a put without a secret keeps it
	src, err := ex.CatalogGetSource(ctx, catWS, "main")
	if err != nil || src.HookSecret != "s3cret-s3cret-s3cret" || src.Commit != commitA || src.URL != "file:///main.git" {
		t.Fatalf("after CatalogSetHookSecret and a put: %+v, %v; want the secret and the commit kept", src, err)
	}
	if ok, err := ex.CatalogSetHookSecret(ctx, catWS, "main", ""); err != nil || !ok {
		t.Fatalf("CatalogSetHookSecret(\"\") = %v, %v", ok, err)
	}
	if src, err := ex.CatalogGetSource(ctx, catWS, "main"); err != nil || src.HookSecret != "" {
		t.Fatalf("after clearing: %+v, %v", src, err)
	}
}

func testCatalogSyncError(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	ctx := t.Context()
	if err := ex.CatalogSyncError(ctx, catWS, "main", "boom", time.Time{}); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("CatalogSyncError(missing) = %v, want catalog.ErrNotFound", err)
	}
	putSource(t, ex, "main")
	at := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	if err := ex.CatalogSyncError(ctx, catWS, "main", "fetch failed", at); err != nil {
		t.Fatal(err)
	}
	src, err := ex.CatalogGetSource(ctx, catWS, "main")
	if err != nil || src.Error != "fetch failed" || src.ErrorAt == nil || !src.ErrorAt.Equal(at) {
		t.Fatalf("after CatalogSyncError: %+v, %v; want the error at %v", src, err, at)
	}
	if err := ex.CatalogSourceSynced(ctx, catWS, "main", commitB, at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	src, err = ex.CatalogGetSource(ctx, catWS, "main")
	if err != nil || src.Error != "" || src.ErrorAt != nil || src.Commit != commitB || !src.SyncedAt.Equal(at.Add(time.Minute)) {
		t.Fatalf("after CatalogSourceSynced: %+v, %v; want commit B, error cleared", src, err)
	}
}

func testCatalogLockSource(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	unlock, err := ex.CatalogLockSource(t.Context(), catWS, "main")
	if err != nil {
		t.Fatal(err)
	}
	// Held: a second lock of the source waits until its context ends;
	// another source's lock is free.
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if u, err := ex.CatalogLockSource(ctx, catWS, "main"); err == nil {
		u()
		t.Fatal("a second CatalogLockSource of a held source succeeded")
	}
	other, err := ex.CatalogLockSource(t.Context(), catWS, "other")
	if err != nil {
		t.Fatalf("CatalogLockSource(other source) = %v", err)
	}
	other()
	unlock()
	again, err := ex.CatalogLockSource(t.Context(), catWS, "main")
	if err != nil {
		t.Fatalf("CatalogLockSource after unlock = %v", err)
	}
	again()
}

func testCatalogApplyLock(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	err := ex.Tx(t.Context(), func(ex driver.Executor) error { return ex.CatalogApplyLock(t.Context(), catWS, "main") })
	if !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("CatalogApplyLock(missing) = %v, want catalog.ErrNotFound", err)
	}
	putSource(t, ex, "main")
	err = ex.Tx(t.Context(), func(ex driver.Executor) error { return ex.CatalogApplyLock(t.Context(), catWS, "main") })
	if err != nil {
		t.Fatalf("CatalogApplyLock = %v", err)
	}
}

func testCatalogAppOwners(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	putSource(t, ex, "one")
	putSource(t, ex, "two")
	insertApps(t, ex, "one", commitA, catApp("y"), catApp("x"))
	err := ex.Tx(t.Context(), func(ex driver.Executor) error {
		owners, err := ex.CatalogAppOwners(t.Context(), catWS, "two", []string{"z", "y", "x"})
		want := []driver.CatalogAppOwner{{AppKey: "x", SourceID: "one"}, {AppKey: "y", SourceID: "one"}}
		if err != nil || !reflect.DeepEqual(owners, want) {
			t.Errorf("CatalogAppOwners(two) = %+v, %v; want %+v", owners, err, want)
		}
		// A source's own apps are not another's.
		if owners, err := ex.CatalogAppOwners(t.Context(), catWS, "one", []string{"x"}); err != nil || len(owners) != 0 {
			t.Errorf("CatalogAppOwners(one) = %+v, %v; want none", owners, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func testCatalogInsertListDelete(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	ctx := t.Context()
	putSource(t, ex, "one")
	putSource(t, ex, "two")
	insertApps(t, ex, "one", commitA, catApp("b-app"), catApp("a-app"))
	insertApps(t, ex, "two", commitB, catApp("c-app"))

	apps, actions, err := ex.CatalogListApps(ctx, catWS, "")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, a := range apps {
		keys = append(keys, a.Key)
	}
	if want := []string{"a-app", "b-app", "c-app"}; !reflect.DeepEqual(keys, want) {
		t.Fatalf("CatalogListApps keys = %v, want %v", keys, want)
	}
	want := catApp("a-app")
	got := apps[0]
	if got.Workspace != catWS || got.SourceID != "one" || got.CommitSHA != commitA || got.Entrypoint != want.Entrypoint ||
		got.Runtime != want.Runtime || got.Timeout != want.Timeout || got.Tag != want.Tag || got.Retry != want.Retry ||
		got.Limits != want.Limits || got.UpdatedAt.IsZero() || got.Actions != nil {
		t.Fatalf("app a-app = %+v, want %+v at commit A of source one, without actions", got, want)
	}
	if len(actions) != 6 {
		t.Fatalf("CatalogListApps gave %d actions, want 6", len(actions))
	}
	if actions[0].AppKey != "a-app" || !reflect.DeepEqual(actions[0].Action, want.Actions[0]) {
		t.Fatalf("first action = %+v, want a-app's %+v with every override", actions[0], want.Actions[0])
	}
	if actions[1].AppKey != "a-app" || !reflect.DeepEqual(actions[1].Action, want.Actions[1]) {
		t.Fatalf("second action = %+v, want a-app's %+v with none", actions[1], want.Actions[1])
	}

	one, oneActions, err := ex.CatalogListApps(ctx, catWS, "c-app")
	if err != nil || len(one) != 1 || one[0].Key != "c-app" || len(oneActions) != 2 || oneActions[0].AppKey != "c-app" {
		t.Fatalf("CatalogListApps(c-app) = %+v, %+v, %v; want c-app and its two actions", one, oneActions, err)
	}

	err = ex.Tx(ctx, func(ex driver.Executor) error { return ex.CatalogDeleteApps(ctx, catWS, "one") })
	if err != nil {
		t.Fatalf("CatalogDeleteApps: %v", err)
	}
	apps, actions, err = ex.CatalogListApps(ctx, catWS, "")
	if err != nil || len(apps) != 1 || apps[0].Key != "c-app" || len(actions) != 2 {
		t.Fatalf("after deleting source one's apps: %+v, %+v, %v; want c-app of two alone", apps, actions, err)
	}
	// The actions went with their apps: the keys are free again.
	insertApps(t, ex, "one", commitB, catApp("a-app"))
}

func testCatalogInsertInvalid(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	putSource(t, ex, "one")
	bad := catApp("bad")
	bad.Runtime = "java" // refused by the app table's CHECK
	err := ex.Tx(t.Context(), func(ex driver.Executor) error {
		return ex.CatalogInsertApps(t.Context(), catalog.SyncParams{Workspace: catWS, SourceID: "one", Commit: commitA,
			Apps: []catalog.App{catApp("good"), bad}})
	})
	if !errors.Is(err, spine.ErrInvalid) {
		t.Fatalf("CatalogInsertApps(unknown runtime) = %v, want spine.ErrInvalid", err)
	}
	if apps, _, err := ex.CatalogListApps(t.Context(), catWS, ""); err != nil || len(apps) != 0 {
		t.Fatalf("after a refused insert: %+v, %v; want no app", apps, err)
	}
}

func testCatalogResolveAction(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	ctx := t.Context()
	putSource(t, ex, "one")
	insertApps(t, ex, "one", commitA, catApp("app"))
	want := catApp("app")
	check := func(ex driver.Executor) {
		t.Helper()
		app, action, err := ex.ResolveAction(ctx, catWS, "app", "a")
		if err != nil {
			t.Fatalf("ResolveAction = %v", err)
		}
		if app.Key != "app" || app.CommitSHA != commitA || app.Runtime != want.Runtime || app.Limits != want.Limits {
			t.Errorf("ResolveAction app = %+v, want %+v at commit A", app, want)
		}
		if !reflect.DeepEqual(action, want.Actions[0]) {
			t.Errorf("ResolveAction action = %+v, want %+v", action, want.Actions[0])
		}
		if _, plain, err := ex.ResolveAction(ctx, catWS, "app", "b"); err != nil || !reflect.DeepEqual(plain, want.Actions[1]) {
			t.Errorf("ResolveAction(b) = %+v, %v; want %+v", plain, err, want.Actions[1])
		}
		for _, c := range [][2]string{{"nope", "a"}, {"app", "nope"}} {
			if _, _, err := ex.ResolveAction(ctx, catWS, c[0], c[1]); !errors.Is(err, catalog.ErrNotFound) {
				t.Errorf("ResolveAction(%s, %s) = %v, want catalog.ErrNotFound", c[0], c[1], err)
			}
		}
		if _, _, err := ex.ResolveAction(ctx, catWS, "app", ""); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("ResolveAction(no action) = %v, want catalog.ErrNotFound", err)
		}
	}
	check(ex)
	if err := ex.Tx(ctx, func(ex driver.Executor) error { check(ex); return nil }); err != nil {
		t.Fatal(err)
	}
}
