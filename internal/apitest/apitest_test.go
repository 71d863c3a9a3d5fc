package apitest_test

import (
	"errors"
	"testing"

	"github.com/windforce/windforce/catalog"

	"go.uber.org/goleak"

	"github.com/windforce/windforce/internal/apitest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestForEachBackend: each backend's env has examples/hello synced as
// source "main", and the sync's answer names its commit and the hello app.
func TestForEachBackend(t *testing.T) {
	t.Parallel()
	apitest.ForEachBackend(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		commit, _ := e.Sync["commit"].(string)
		apps, _ := e.Sync["apps"].([]any)
		if len(commit) != 40 || len(apps) != 1 || apps[0].(map[string]any)["app"] != "hello" {
			t.Fatalf("first sync answered %v", e.Sync)
		}
		if _, err := e.DB.GetSource(t.Context(), apitest.DefaultWorkspace, "main"); err != nil {
			t.Fatalf("source main: %v", err)
		}
	})
}

// TestNoSource: with NoSource the repository is committed but no source
// is added.
func TestNoSource(t *testing.T) {
	t.Parallel()
	e := apitest.NewSQLite(t, apitest.Options{NoSource: true})
	if e.Sync != nil || e.Repo.URL == "" {
		t.Fatalf("env without source: sync %v, repo %q", e.Sync, e.Repo.URL)
	}
	if _, err := e.DB.GetSource(t.Context(), apitest.DefaultWorkspace, "main"); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("source main without a sync: %v, want catalog.ErrNotFound", err)
	}
}
