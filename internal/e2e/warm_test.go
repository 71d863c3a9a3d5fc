package e2e_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/internal/gittest"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/spine"
)

// TestWarmFromManifest: `warm:` in a synced manifest reaches the worker
// through the job's pin (DESIGN §7): the app's jobs share a process that
// imported the entrypoint once, recycled after max_jobs; an action with
// `warm: false` starts a fresh process each time. On both pairings.
func TestWarmFromManifest(t *testing.T) {
	t.Parallel()
	bun := requireBun(t)
	forEachPairing(t, func(t *testing.T, w *world) {
		r := gittest.New(t)
		r.Write(t, map[string]string{
			"windforce.yaml": "apps:\n  counter:\n    entrypoint: main.ts\n    runtime: bun\n    warm: { max_jobs: 2 }\n" +
				"    actions:\n      count: {}\n      cold: { warm: false }\n",
			"main.ts": "let runs = 0;\nexport default () => ({ runs: ++runs });\n",
		})
		r.CommitPush(t, "warm counter")
		sy := &source.Syncer{Catalog: w.db, Cache: w.cache, Logger: quietLogger(), AnyFileSource: true}
		if err := sy.AddSource(t.Context(), catalog.Source{Workspace: ws, ID: "counter", URL: r.URL, Branch: "main"}); err != nil {
			t.Fatal(err)
		}
		if _, err := sy.Sync(t.Context(), ws, "counter"); err != nil {
			t.Fatalf("sync: %v", err)
		}
		w.startWorker(t, bun)
		runs := func(action string, n int) string {
			var got []int
			for range n {
				res, err := w.db.EnqueueAction(t.Context(), catalog.EnqueueRequest{Workspace: ws, App: "counter",
					Action: action, TriggerKind: spine.TriggerAPI, CreatedBy: "e2e", Input: json.RawMessage("null")})
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, w.runs(t, res.ID))
			}
			return fmt.Sprint(got)
		}
		if got := runs("count", 5); got != "[1 2 1 2 1]" {
			t.Errorf("warm counter/count ran as jobs %s of their processes, want [1 2 1 2 1]", got)
		}
		if got := runs("cold", 2); got != "[1 1]" {
			t.Errorf("counter/cold (warm: false) ran as jobs %s, want [1 1]", got)
		}
	})
}

// runs waits for the job and reads its {"runs": n} result.
func (w *world) runs(t *testing.T, id uuid.UUID) int {
	t.Helper()
	j := w.waitTerminal(t, id, 60*time.Second)
	var r struct{ Runs int }
	if j.Status != spine.StatusSuccess || json.Unmarshal(j.Result, &r) != nil {
		t.Fatalf("job %s %s %+v; logs:\n%s", j.Status, j.Result, j.Error, w.logs(t, id))
	}
	return r.Runs
}
