package postgres_test

import (
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store"
	"github.com/windforce/windforce/store/postgres"
)

// batchJobs is more than one outbox row holds (event_batch_max, 4,096),
// so each batch statement writes two rows for it.
const batchJobs = 4100

// openBatchStore is a migrated store on a fresh schema and its driver.
func openBatchStore(t *testing.T) (*store.Store, *postgres.Driver) {
	t.Helper()
	url, schema := testdb.PostgresSchema(t)
	d, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema, MaxConns: 4, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	s := store.New(d)
	t.Cleanup(s.Close)
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return s, d
}

// disabledSink gives ws a disabled sink: its events are recorded, and
// nothing is delivered.
func disabledSink(t *testing.T, s *store.Store, ws string) {
	t.Helper()
	sk, err := s.CreateSink(t.Context(), sink.Sink{Workspace: ws, ID: "off", Kind: sink.KindNATS, URL: "nats://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	off := false
	if _, err := s.UpdateSink(t.Context(), ws, sk.ID, sink.Patch{Enabled: &off}); err != nil {
		t.Fatal(err)
	}
}

// runBatch enqueues n jobs of ws (and n of a workspace without a sink) in
// one batch, claims them in one statement and completes them in one: the
// three statements that write one outbox row per batch (migration 0021).
func runBatch(t *testing.T, s *store.Store, ws string, n int) []uuid.UUID {
	t.Helper()
	ps := make([]spine.EnqueueParams, 0, 2*n)
	for _, w := range []string{ws, "nosink"} {
		for range n {
			ps = append(ps, spine.EnqueueParams{
				Workspace: w, TriggerKind: spine.TriggerAPI, Input: json.RawMessage(`{}`),
				Pin: spine.Pin{AppKey: "app", ActionKey: "act", Tag: "batch", Runtime: "go", Retry: spine.DefaultRetry},
			})
		}
	}
	if _, err := s.EnqueueBatch(t.Context(), ps); err != nil {
		t.Fatalf("enqueue batch: %v", err)
	}
	claimed, err := s.Claim(t.Context(), spine.ClaimParams{Worker: "w1", Tags: []string{"batch"}, Limit: 2 * n})
	if err != nil || len(claimed) != 2*n {
		t.Fatalf("claim: %d jobs, %v", len(claimed), err)
	}
	done := make([]spine.CompleteParams, len(claimed))
	var ids []uuid.UUID
	for i, c := range claimed {
		done[i] = spine.CompleteParams{Lease: spine.Lease{JobID: c.ID, ClaimToken: c.ClaimToken}, Result: json.RawMessage(`{"n":1}`)}
		if c.Workspace == ws {
			ids = append(ids, c.ID)
		}
	}
	outs, err := s.CompleteBatch(t.Context(), done)
	if err != nil {
		t.Fatalf("complete batch: %v", err)
	}
	for _, o := range outs {
		if o.Err != nil {
			t.Fatalf("complete: %v", o.Err)
		}
	}
	return ids
}

// allEvents reads ws's events from after on in pages of limit, until the
// outbox's last seq is final and read.
func allEvents(t *testing.T, s *store.Store, ws string, after int64, limit int, want int) []events.Event {
	t.Helper()
	var out []events.Event
	deadline := time.Now().Add(20 * time.Second)
	for len(out) < want {
		evs, err := s.EventsAfter(t.Context(), ws, after, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) > limit {
			t.Fatalf("%d events for a limit of %d", len(evs), limit)
		}
		if len(evs) > 0 {
			after = evs[len(evs)-1].Seq
		} else if time.Now().After(deadline) {
			t.Fatalf("%d of %d events read after 20 s", len(out), want)
		}
		out = append(out, evs...)
	}
	return out
}

// TestBatchEventsReadAsSingleEvents: the events of the batch statements,
// two outbox rows each, read page by page (the pages cutting rows), are
// each job's job.queued, job.started and job.succeeded in that order,
// each with its own increasing seq, its own UUIDv7 id of its time and the
// job's data; the workspace without a sink has none.
func TestBatchEventsReadAsSingleEvents(t *testing.T) {
	s, d := openBatchStore(t)
	disabledSink(t, s, "ws")
	ids := runBatch(t, s, "ws", batchJobs)
	var rows int
	if err := d.Pool().QueryRow(t.Context(), `SELECT count(*) FROM event_outbox`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 6 {
		t.Errorf("%d outbox rows for three batches of %d events, want 6", rows, batchJobs)
	}

	evs := allEvents(t, s, "ws", 0, 1000, 3*batchJobs)
	if len(evs) != 3*batchJobs {
		t.Fatalf("%d events, want %d", len(evs), 3*batchJobs)
	}
	seen := map[uuid.UUID]bool{}
	life := map[string][]string{}
	for i, ev := range evs {
		if i > 0 && ev.Seq <= evs[i-1].Seq {
			t.Fatalf("event %d: seq %d after %d", i, ev.Seq, evs[i-1].Seq)
		}
		if seen[ev.ID] || ev.ID.Version() != 7 {
			t.Fatalf("event %d: id %s repeated or not a UUIDv7", i, ev.ID)
		}
		seen[ev.ID] = true
		if sec, nsec := ev.ID.Time().UnixTime(); time.Unix(sec, nsec).UnixMilli() != ev.Time.UnixMilli() {
			t.Fatalf("event %d: id %s is not of its time %s", i, ev.ID, ev.Time)
		}
		var data struct {
			ID     string `json:"id"`
			Status string `json:"status"`
			Worker string `json:"worker"`
		}
		if err := json.Unmarshal(ev.Data, &data); err != nil || data.ID != ev.Subject || ev.Workspace != "ws" {
			t.Fatalf("event %d: %+v: data %s (%v)", i, ev, ev.Data, err)
		}
		life[ev.Subject] = append(life[ev.Subject], string(ev.Type)+"/"+data.Status)
	}
	want := []string{"job.queued/queued", "job.started/running", "job.succeeded/success"}
	for _, id := range ids {
		if got := life[id.String()]; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			t.Fatalf("job %s: events %v, want %v", id, got, want)
		}
	}

	// A page that starts inside a row, and one small page: the same events.
	mid := evs[batchJobs+5].Seq
	page, err := s.EventsAfter(t.Context(), "ws", mid, 3)
	if err != nil || len(page) != 3 || page[0].ID != evs[batchJobs+6].ID || page[2].Seq != evs[batchJobs+8].Seq {
		t.Fatalf("page after %d: %v, %v", mid, page, err)
	}
	// Every workspace reads the same events (no others were written).
	every := allEvents(t, s, "", 0, store.MaxEventsLimit, 3*batchJobs)
	if len(every) != len(evs) || every[len(every)-1].ID != evs[len(evs)-1].ID {
		t.Fatalf("all workspaces: %d events, want %d", len(every), len(evs))
	}
	recent, err := s.RecentEvents(t.Context(), "ws", 5)
	if err != nil || len(recent) != 5 || recent[0].ID != evs[len(evs)-1].ID || recent[4].Seq != evs[len(evs)-5].Seq {
		t.Fatalf("recent: %v, %v", recent, err)
	}
}

// TestBatchEventsDeliverAndSweep: a sink created after a batch starts
// after its last event; the next batch's events fan out to it one
// delivery each, a claim reads each one's data from its batch row, and
// the sweep keeps a row while any of its events has a delivery.
func TestBatchEventsDeliverAndSweep(t *testing.T) {
	s, _ := openBatchStore(t)
	disabledSink(t, s, "ws")
	const n = 50
	runBatch(t, s, "ws", n)
	first := allEvents(t, s, "ws", 0, 1000, 3*n)
	sk, err := s.CreateSink(t.Context(), sink.Sink{Workspace: "ws", ID: "hook", Kind: sink.KindWebhook,
		URL: "https://example.com/hook", Types: []string{"job.succeeded"}})
	if err != nil {
		t.Fatal(err)
	}
	if last := first[len(first)-1].Seq; sk.AfterSeq != last {
		t.Fatalf("sink starts after %d, want the last event %d", sk.AfterSeq, last)
	}
	ids := runBatch(t, s, "ws", n)
	allEvents(t, s, "ws", sk.AfterSeq, 1000, 3*n)
	now := time.Now()
	for range 100 {
		if _, err := s.FanOut(t.Context(), now, 1000); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ClaimDeliveries(t.Context(), "ws", "hook", now, uuid.New(), time.Minute, 1000)
	if err != nil || len(got) != n {
		t.Fatalf("claimed %d deliveries, want %d: %v", len(got), n, err)
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id.String()] = true
	}
	for _, c := range got {
		var data struct {
			ID     string          `json:"id"`
			Status string          `json:"status"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(c.Event.Data, &data); err != nil || !want[data.ID] || data.ID != c.Subject ||
			data.Status != "success" || string(data.Result) != `{"n":1}` || c.EventType != "job.succeeded" {
			t.Fatalf("delivery %d: %s %s data %s (%v)", c.EventSeq, c.EventType, c.Subject, c.Event.Data, err)
		}
		delete(want, data.ID)
	}

	// Sweeping everything: the first batch's rows go, the second's
	// completion row stays (its deliveries are pending), the rest go.
	if _, err := s.Sweep(t.Context(), spine.SweepParams{Before: now.Add(time.Hour), BatchSize: 100}); err != nil {
		t.Fatal(err)
	}
	left := allEvents(t, s, "ws", 0, 1000, n)
	if len(left) != n || left[0].Type != events.Type("job.succeeded") || left[0].Seq <= sk.AfterSeq {
		t.Fatalf("after the sweep: %d events (first %+v), want the %d with deliveries", len(left), left[0], n)
	}
}
