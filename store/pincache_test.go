package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// resolveCounter counts the catalog reads of an executor.
type resolveCounter struct {
	driver.Executor
	reads *atomic.Int64
}

func (c resolveCounter) ResolveAction(ctx context.Context, workspace, app, action string) (catalog.App, catalog.Action, error) {
	c.reads.Add(1)
	return c.Executor.ResolveAction(ctx, workspace, app, action)
}

// syncGreet applies hello/greet at commit (40 times c), with schema as
// greet's input schema.
func syncGreet(t *testing.T, s *Store, c, schema string) {
	t.Helper()
	err := s.ApplySync(t.Context(), catalog.SyncParams{Workspace: "ws", SourceID: "main", Commit: strings.Repeat(c, 40),
		Apps: []catalog.App{{Key: "hello", Entrypoint: "main.ts", Runtime: "bun", Timeout: time.Minute, Tag: "default",
			Retry: spine.DefaultRetry, Actions: []catalog.Action{{Key: "greet", InputSchema: json.RawMessage(schema)}}}}})
	if err != nil {
		t.Fatal(err)
	}
}

// An enqueue outside a transaction reads the catalog once per action: the
// next ones pin from what it read. A sync that moves the app makes the
// next enqueue's insert refuse the old pin, and it pins the new commit; a
// sync whose schema accepts what the old one refused accepts it at once;
// an app gone is not found; nothing refused writes a row.
func TestEnqueuePinnedReadsTheCatalogOnce(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		s = withGreet(t, s)
		var reads atomic.Int64
		counted := &Store{drv: s.drv, ex: resolveCounter{s.ex, &reads}}
		req := catalog.EnqueueRequest{Workspace: "ws", App: "hello", Action: "greet", TriggerKind: spine.TriggerAPI,
			CreatedBy: "lib", Input: []byte(`{"name":"ada"}`)}
		enqueue := func(input string) (spine.Job, error) {
			t.Helper()
			r := req
			r.Input = []byte(input)
			res, err := counted.EnqueueAction(t.Context(), r)
			if err != nil {
				return spine.Job{}, err
			}
			return mustGetJob(t, s, res), nil
		}
		for range 3 {
			if _, err := enqueue(`{"name":"ada"}`); err != nil {
				t.Fatal(err)
			}
		}
		if n := reads.Load(); n != 1 {
			t.Fatalf("three enqueues of one action read the catalog %d times, want once", n)
		}

		syncGreet(t, s, "d", `{"type":"object","required":["name"]}`)
		j, err := enqueue(`{"name":"ada"}`)
		if err != nil || j.Pin.CommitSHA != strings.Repeat("d", 40) {
			t.Fatalf("after a sync: pinned %q (%v), want the new commit", j.Pin.CommitSHA, err)
		}
		if n := reads.Load(); n != 2 {
			t.Fatalf("the stale pin was read again %d times, want once", n-1)
		}

		var inputErr *catalog.InputError
		if _, err := enqueue(`{}`); !errors.As(err, &inputErr) {
			t.Fatalf("an input the schema refuses: %v, want *catalog.InputError", err)
		}
		syncGreet(t, s, "e", `{"type":"object"}`)
		if j, err := enqueue(`{}`); err != nil || j.Pin.CommitSHA != strings.Repeat("e", 40) {
			t.Fatalf("an input the new schema accepts: pinned %q, %v", j.Pin.CommitSHA, err)
		}

		if err := s.ApplySync(t.Context(), catalog.SyncParams{Workspace: "ws", SourceID: "main", Commit: strings.Repeat("f", 40)}); err != nil {
			t.Fatal(err)
		}
		if _, err := enqueue(`{}`); !errors.Is(err, catalog.ErrNotFound) {
			t.Fatalf("an app the sync removed: %v, want ErrNotFound", err)
		}
		if n := jobs(t, s); n != 5 {
			t.Fatalf("%d jobs, want the 5 accepted", n)
		}
	})
}

// An insert with AtCommit is refused with ErrStalePin once the app is at
// another commit, and writes no row.
func TestEnqueueAtCommitRefusesAStalePin(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		s = withGreet(t, s)
		app, action, err := s.ex.ResolveAction(t.Context(), "ws", "hello", "greet")
		if err != nil {
			t.Fatal(err)
		}
		syncGreet(t, s, "d", `{}`)
		p, err := catalog.Resolve(catalog.EnqueueRequest{Workspace: "ws", App: "hello", Action: "greet",
			TriggerKind: spine.TriggerAPI, Input: []byte(`{"name":"ada"}`)}, app, action)
		if err != nil {
			t.Fatal(err)
		}
		p.AtCommit = true
		for _, unsynced := range []bool{false, true} {
			p.Unsynced = unsynced
			if _, err := s.EnqueueTx(t.Context(), s.ex, p); !errors.Is(err, spine.ErrStalePin) {
				t.Fatalf("unsynced %v: %v, want ErrStalePin", unsynced, err)
			}
		}
		if n := jobs(t, s); n != 0 {
			t.Fatalf("%d jobs after refused inserts, want none", n)
		}
	})
}
