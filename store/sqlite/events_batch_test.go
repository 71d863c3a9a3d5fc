package sqlite

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// addSink gives workspace a (disabled) sink, so it records events.
func addSink(t *testing.T, s *Driver, workspace string) {
	t.Helper()
	now := time.Now()
	err := s.Executor().SinkInsert(context.Background(), sink.Sink{Workspace: workspace, ID: "s", Kind: sink.KindNATS,
		URL: "nats://127.0.0.1:4222", Subject: "windforce", CreatedAt: now, UpdatedAt: now})
	if err != nil {
		t.Fatalf("add sink: %v", err)
	}
}

// TestJobEventsOneRowPerBatch: an enqueue batch, a claim and a batch
// completion of jobs of two workspaces with sinks (and one without) write
// one outbox row per workspace each, and read back as one event per job
// and transition with consecutive seqs, distinct ids that stay the same,
// from any cursor inside a row, and through the relay's claim.
func TestJobEventsOneRowPerBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	ex := s.Executor()
	addSink(t, s, "a")
	addSink(t, s, "b")
	var ps []spine.EnqueueParams
	for i := range 9 {
		p := job("t")
		p.Workspace = []string{"a", "b", "none"}[i%3]
		p, err := spine.PrepareEnqueue(p, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	if err := ex.Tx(ctx, func(tx driver.Executor) error { return tx.EnqueueInsertBatch(ctx, ps, []string{"t"}) }); err != nil {
		t.Fatalf("enqueue batch: %v", err)
	}
	jobs, err := ex.Claim(ctx, spine.ClaimParams{Worker: "w", Tags: []string{"t"}, Limit: 9})
	if err != nil || len(jobs) != 9 {
		t.Fatalf("claim: %d jobs, %v", len(jobs), err)
	}
	cs := make([]spine.CompleteParams, len(jobs))
	for i, j := range jobs {
		cs[i] = spine.CompleteParams{Lease: spine.Lease{JobID: j.ID, ClaimToken: j.ClaimToken}, Result: json.RawMessage(`{"i":1}`)}
	}
	if _, err := ex.CompleteBatch(ctx, cs); err != nil {
		t.Fatalf("complete batch: %v", err)
	}
	if n := count(t, s, `SELECT count(*) FROM event_outbox`); n != 6 {
		t.Errorf("outbox rows: %d, want 6 (3 statements × 2 workspaces)", n)
	}

	all, err := ex.EventsAfter(ctx, "", 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 18 {
		t.Fatalf("events: %d, want 18 (6 jobs × 3)", len(all))
	}
	ids := map[uuid.UUID]bool{}
	types := map[string][]events.Type{}
	for i, ev := range all {
		if ev.Seq != int64(i+1) {
			t.Errorf("event %d: seq %d", i, ev.Seq)
		}
		if ids[ev.ID] || ev.ID.Version() != 7 || ev.ID.Variant() != uuid.RFC4122 {
			t.Errorf("event %d: id %s repeated or not a UUIDv7", i, ev.ID)
		}
		ids[ev.ID] = true
		if ev.Workspace == "none" {
			t.Errorf("event %d of a workspace without a sink", i)
		}
		var data struct{ ID, Workspace, Status string }
		if err := json.Unmarshal(ev.Data, &data); err != nil || data.ID != ev.Subject || data.Workspace != ev.Workspace {
			t.Errorf("event %d: data %s (%v)", i, ev.Data, err)
		}
		types[ev.Subject] = append(types[ev.Subject], ev.Type)
	}
	for subject, ts := range types {
		if len(ts) != 3 || ts[0] != events.JobQueued || ts[1] != events.JobStarted || ts[2] != events.JobSucceeded {
			t.Errorf("job %s: events %v", subject, ts)
		}
	}

	// From every cursor, limited to 2, the rest in order, the same ids.
	for after := int64(0); after < 18; after++ {
		evs, err := ex.EventsAfter(ctx, "", after, 2)
		if err != nil || len(evs) != min(2, 18-int(after)) {
			t.Fatalf("after %d: %d events, %v", after, len(evs), err)
		}
		for k, ev := range evs {
			if want := all[int(after)+k]; ev.Seq != want.Seq || ev.ID != want.ID || string(ev.Data) != string(want.Data) {
				t.Errorf("after %d: event %d is seq %d id %s, want %d %s", after, k, ev.Seq, ev.ID, want.Seq, want.ID)
			}
		}
	}
	b, err := ex.EventsAfter(ctx, "b", 0, 1000)
	if err != nil || len(b) != 9 {
		t.Fatalf("workspace b: %d events, %v", len(b), err)
	}
	recent, err := ex.EventsRecent(ctx, "b", 4)
	if err != nil || len(recent) != 4 || recent[0].Seq != b[8].Seq || recent[3].Seq != b[5].Seq {
		t.Fatalf("recent of b: %+v, %v", recent, err)
	}

	// The relay's claim finds events inside rows, with their data.
	var ds []sink.Delivery
	for _, ev := range b[1:] {
		if ev.Seq%2 == 0 {
			ds = append(ds, sink.Delivery{Workspace: "b", SinkID: "s", EventSeq: ev.Seq, EventID: ev.ID,
				EventType: string(ev.Type), Subject: ev.Subject})
		}
	}
	if err := ex.DeliveryInsert(ctx, ds, time.Time{}); err != nil {
		t.Fatal(err)
	}
	got, err := ex.DeliveryClaim(ctx, driver.DeliveryClaimParams{Workspace: "b", SinkID: "s", Lease: uuid.New(),
		LeaseFor: time.Minute, Limit: 100})
	if err != nil || len(got) == 0 {
		t.Fatalf("delivery claim: %d, %v", len(got), err)
	}
	bySeq := map[int64]events.Event{}
	for _, ev := range b {
		bySeq[ev.Seq] = ev
	}
	for _, c := range got {
		want := bySeq[c.EventSeq]
		if c.Event.ID != want.ID || c.Event.Type != want.Type || string(c.Event.Data) != string(want.Data) || !c.Event.Time.Equal(want.Time) {
			t.Errorf("claimed %d: %+v, want %+v", c.EventSeq, c.Event, want)
		}
	}
}

// TestNthEventID: the k-th event of a row keeps the row id's time,
// version and variant, and no two of a row share an id.
func TestNthEventID(t *testing.T) {
	t.Parallel()
	id := uuid.Must(uuid.NewV7())
	if nthEventID(id, 0) != id {
		t.Fatal("the first event's id is not the row's")
	}
	seen := map[uuid.UUID]bool{}
	for k := range int64(1000) {
		n := nthEventID(id, k)
		if seen[n] || n.Version() != 7 || n.Variant() != uuid.RFC4122 || [6]byte(n[:6]) != [6]byte(id[:6]) {
			t.Fatalf("event %d: %s", k, n)
		}
		seen[n] = true
	}
	var top uuid.UUID // the random bits wrap, the variant stays
	copy(top[:], id[:])
	top[8] = 0xbf // variant 10, random bits all ones
	for i := 9; i < 16; i++ {
		top[i] = 0xff
	}
	if n := nthEventID(top, 1); n.Variant() != uuid.RFC4122 || n[8] != 0x80 {
		t.Errorf("wrapped: %s", n)
	}
}

// TestAppendJSONString: plain ASCII as it is, the rest escaped as JSON;
// a uuid as its canonical text.
func TestAppendJSONString(t *testing.T) {
	t.Parallel()
	if id := uuid.Must(uuid.NewV7()); string(appendUUID(nil, id)) != id.String() {
		t.Errorf("appendUUID(%s) = %s", id, appendUUID(nil, id))
	}
	for _, s := range []string{"", "host-1/3", `say "hi"`, "a\\b", "line\nbreak", "ünï", "\x00"} {
		var back string
		if err := json.Unmarshal(appendJSONString(nil, s), &back); err != nil || back != s {
			t.Errorf("%q: %s, %v", s, appendJSONString(nil, s), err)
		}
	}
}

// TestMigrationKeepsJobEvents: a job event written under migration 0020
// (its state in the job_* columns) reads the same after 0021 made it a
// one-event row, with its id, seq and state.
func TestMigrationKeepsJobEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, sqlOf(qMigrateTable)); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Version <= 20 {
			if err := apply(ctx, tx, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	id, job := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	_, err = tx.ExecContext(ctx, `INSERT INTO event_outbox (id, workspace, type, subject, time, data, job_id,
        job_status, job_priority, job_started_at, job_completed_at, job_worker, job_attempt, job_restarts,
        job_generation, job_result, job_canceled_by, job_canceled_reason, job_secrets)
        VALUES (?, 'ws', 'job.succeeded', ?, 5, '{}', ?, 'success', 3, 4, 5, 'w', 2, 1, 1, '{"ok":true}', '', '', '["a@1"]')`,
		id.String(), job.String(), job.String())
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	evs, err := s.Executor().EventsAfter(ctx, "ws", 0, 10)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events: %+v, %v", evs, err)
	}
	ev := evs[0]
	var data struct {
		Status   string          `json:"status"`
		Priority int             `json:"priority"`
		Attempt  int             `json:"attempt"`
		Worker   string          `json:"worker"`
		Result   json.RawMessage `json:"result"`
		Secrets  []string        `json:"secrets"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil {
		t.Fatal(err)
	}
	if ev.Seq != 1 || ev.ID != id || ev.Subject != job.String() || ev.Type != events.JobSucceeded ||
		data.Status != "success" || data.Priority != 3 || data.Attempt != 2 || data.Worker != "w" ||
		string(data.Result) != `{"ok":true}` || len(data.Secrets) != 1 {
		t.Errorf("event after migration: %+v, data %s", ev, ev.Data)
	}
}
