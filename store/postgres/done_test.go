package postgres

import (
	"context"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
	"github.com/windforce/windforce/store/driver/drivertest"
)

// A waiter on one server is woken by a completion another process (a
// worker with its own store on the same database) commits.
func TestCompletionWakesWaitersOfAnotherStore(t *testing.T) {
	t.Parallel()
	url, schema := testdb.PostgresSchema(t)
	open := func() *Driver {
		s, err := Open(context.Background(), url, Options{Schema: schema, MaxConns: 4})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		t.Cleanup(s.Close)
		return s
	}
	server, worker := open(), open()
	if err := server.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := enqueue(t, server, job("default"))
	ch, stop := server.SubscribeCompletion(res.ID)
	defer stop()
	c := claimOne(t, worker, "default", claimNow())
	if _, err := worker.Executor().Complete(context.Background(), driver.Completion{Lease: lease(c), Status: spine.StatusSuccess, Result: []byte(`1`)}); err != nil {
		t.Fatal(err)
	}
	drivertest.WaitWake(t, ch, "on the server after the worker's store completed the job")
	if j := getJob(t, server, res); j.Status != spine.StatusSuccess {
		t.Fatalf("status after the wake-up %s, want success", j.Status)
	}
}

// A listener that lost its connection wakes every completion waiter once
// it is back: it may have missed their jobs' notifications.
func TestListenerReconnectWakesCompletionWaiters(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	res := enqueue(t, s, job("default"))
	ch, stop := s.SubscribeCompletion(res.ID)
	defer stop()
	if _, err := s.pool.Exec(context.Background(), "SELECT pg_terminate_backend($1)", int32(s.listener.pid.Load())); err != nil {
		t.Fatal(err)
	}
	drivertest.WaitWake(t, ch, "after the listener reconnected")
}

// Completion payloads stay under Postgres's 8,000-byte limit and read back
// as the ids they carry; a line of complete_batch.sql reads back as its
// job's result.
func TestDonePayloads(t *testing.T) {
	t.Parallel()
	ids := make([]uuid.UUID, 2*doneChunk+50)
	for i := range ids {
		ids[i] = uuid.New()
	}
	payloads := donePayloads(ids)
	if len(payloads) != 3 {
		t.Fatalf("%d ids in %d payloads, want 3", len(ids), len(payloads))
	}
	var back []uuid.UUID
	for _, p := range payloads {
		if len(p) >= 8000 {
			t.Fatalf("payload of %d bytes, over the limit", len(p))
		}
		for _, f := range parseDone(p) {
			if f.Carries() {
				t.Fatalf("an id alone reads as an outcome: %+v", f)
			}
			back = append(back, f.ID)
		}
	}
	if !slices.Equal(back, ids) {
		t.Fatal("payloads do not read back as the ids they were built from")
	}
	if got := donePayloads(nil); len(got) != 0 {
		t.Fatalf("no ids: %d payloads, want none", len(got))
	}
	if got := parseDone("not-an-id," + ids[0].String()); len(got) != 1 || got[0].ID != ids[0] {
		t.Fatalf("a malformed id was not skipped: %v", got)
	}
	lines := ids[0].String() + ` {"a": "b c"}` + "\n" + ids[1].String() + "\nnot-an-id x\n" + ids[2].String() + " null"
	got := parseDone(lines)
	want := []spine.Finished{
		{ID: ids[0], Status: spine.StatusSuccess, Result: []byte(`{"a": "b c"}`)},
		{ID: ids[1]},
		{ID: ids[2], Status: spine.StatusSuccess, Result: []byte(`null`)},
	}
	if len(got) != len(want) {
		t.Fatalf("lines read back as %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].Status != want[i].Status || string(got[i].Result) != string(want[i].Result) {
			t.Fatalf("line %d reads back as %+v, want %+v", i, got[i], want[i])
		}
	}
}
