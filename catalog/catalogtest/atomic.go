package catalogtest

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/windforce/windforce/catalog"
)

// testApplyAtomic: an ApplySync that fails halfway (the database refuses
// its second app) changes nothing.
func testApplyAtomic(t *testing.T, newStore func(t *testing.T) Store) {
	t.Parallel()
	s := setup(t, newStore)
	apply(t, s, commitA, appAt(commitA))
	bad := appAt(commitB)
	bad.Key = "zzz"
	bad.Runtime = "java" // refused by the app table's CHECK
	err := s.ApplySync(t.Context(), catalog.SyncParams{Workspace: ws, SourceID: srcID, Commit: commitB,
		Apps: []catalog.App{appAt(commitB), bad}})
	if err == nil {
		t.Fatal("ApplySync with a refused app succeeded")
	}
	apps, err := s.ListApps(t.Context(), ws)
	if err != nil || len(apps) != 1 || apps[0].CommitSHA != commitA || len(apps[0].Actions) != 2 {
		t.Fatalf("after a failed apply: %+v, %v; want commit A untouched", apps, err)
	}
	if src, _ := s.GetSource(t.Context(), ws, srcID); src.Commit != commitA {
		t.Fatalf("source moved to %s", src.Commit)
	}
}

// testPinDuringSync enqueues while syncs flip the catalog between A and
// B: every job pins one commit whole (A's schema with A's commit), never
// a mix, and never fails to find the app.
func testPinDuringSync(t *testing.T, newStore func(t *testing.T) Store) {
	t.Parallel()
	s := setup(t, newStore)
	apply(t, s, commitA, appAt(commitA))
	const rounds = 30
	var wg sync.WaitGroup
	defer wg.Wait() // also when the test fails: the goroutine uses t
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range rounds {
			commit := commitA
			if i%2 == 0 {
				commit = commitB
			}
			if err := s.ApplySync(t.Context(), catalog.SyncParams{Workspace: ws, SourceID: srcID, Commit: commit,
				Apps: []catalog.App{appAt(commit)}}); err != nil {
				t.Errorf("apply: %v", err)
				return
			}
		}
	}()
	for range rounds {
		j := enqueue(t, s, request("greet", `{"name":"Ada","lang":"en"}`))
		hasLang := strings.Contains(string(j.Pin.InputSchema), "lang")
		switch {
		case j.Pin.CommitSHA == commitA && !hasLang && j.Pin.Tag == "default":
		case j.Pin.CommitSHA == commitB && hasLang && j.Pin.Tag == "gpu":
		default:
			pin, _ := json.Marshal(j.Pin)
			t.Fatalf("job pinned a mix of two commits: %s", pin)
		}
	}
}
