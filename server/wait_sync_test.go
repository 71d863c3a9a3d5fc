package server_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/internal/apitest"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/server"
	"github.com/windforce/windforce/spine"
)

// syncStore records the order of unsynced enqueues and Syncs.
type syncStore struct {
	server.Store
	mu  sync.Mutex
	ops []string
}

func (s *syncStore) EnqueueAction(ctx context.Context, r catalog.EnqueueRequest) (spine.EnqueueResult, error) {
	s.record(map[bool]string{true: "enqueue unsynced", false: "enqueue"}[r.Unsynced])
	return s.Store.EnqueueAction(ctx, r)
}

func (s *syncStore) Sync(ctx context.Context) error {
	s.record("sync")
	return s.Store.Sync(ctx)
}

func (s *syncStore) record(op string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops = append(s.ops, op)
}

func (s *syncStore) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ops := s.ops
	s.ops = nil
	return ops
}

// TestRunWaitSyncsBeforeItNamesTheJob: a ?wait enqueues unsynced (its
// outcome's synced commit makes the job durable), and an answer that names
// the job before its outcome (202 when the wait ends first) syncs before
// it. Without ?wait, or with a coalesce key, the enqueue is synced.
func TestRunWaitSyncsBeforeItNamesTheJob(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, db server.Store, c objectcache.Cache) {
		s := &syncStore{Store: db}
		e := wrap(t, apitest.New(t, s, c, options))
		s.take() // the setup's
		got := e.call("POST", "/api/w/ws/jobs/run/hello/greet?wait=50ms", adminToken, `{"name":"Ada"}`).want(http.StatusAccepted).obj()
		if got["status"] != "queued" {
			t.Fatalf("?wait with no worker answered %v", got)
		}
		if ops := s.take(); len(ops) != 2 || ops[0] != "enqueue unsynced" || ops[1] != "sync" {
			t.Fatalf("?wait answered 202 after %q, want an unsynced enqueue, then a sync", ops)
		}
		e.call("POST", "/api/w/ws/jobs/run/hello/greet", adminToken, `{"name":"Bo"}`).want(http.StatusCreated)
		e.call("POST", "/api/w/ws/jobs/run/hello/greet?wait=50ms&coalesce_key=k", adminToken, `{"name":"Cy"}`).want(http.StatusAccepted)
		if ops := s.take(); len(ops) != 3 || ops[0] != "enqueue" || ops[1] != "enqueue" || ops[2] != "sync" {
			t.Fatalf("a run without ?wait and a coalesced ?wait: %q, want two synced enqueues (and the 202's sync)", ops)
		}
	})
}
