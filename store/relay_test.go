package store

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

// putEvent writes one outbox row as a state change would (the relay's
// tests need rows of their own choosing) and returns its seq.
func putEvent(t *testing.T, s *Store, ws, typ, subject string, at time.Time) int64 {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	data := fmt.Sprintf(`{"id":%q,"type":%q}`, subject, typ)
	var seq int64
	var err error
	switch d := s.Driver().(type) {
	case *postgres.Driver:
		err = d.Pool().QueryRow(t.Context(), `INSERT INTO event_outbox (id, workspace, type, subject, time, data)
			VALUES ($1, $2, $3, $4, $5, $6::jsonb) RETURNING seq`, id, ws, typ, subject, at, data).Scan(&seq)
	case *sqlite.Driver:
		err = d.DB().QueryRowContext(t.Context(), `INSERT INTO event_outbox (id, workspace, type, subject, time, data)
			VALUES (?, ?, ?, ?, ?, ?) RETURNING seq`, id.String(), ws, typ, subject, at.UnixMicro(), data).Scan(&seq)
	default:
		t.Fatalf("no event writer for %T", d)
	}
	if err != nil {
		t.Fatalf("insert event: %v", err)
	}
	return seq
}

// webhookSink is a webhook sink of ws wanting types.
func webhookSink(ws, id string, types ...string) sink.Sink {
	return sink.Sink{Workspace: ws, ID: id, Kind: sink.KindWebhook, URL: "https://example.com/" + id, Types: types}
}

// fanAll fans out until the cursor has passed every event written
// (EventsAfter answers a final prefix only: on Postgres an event becomes
// final once every transaction open at its commit has ended, anywhere on
// the cluster).
func fanAll(t *testing.T, s *Store, now time.Time) {
	t.Helper()
	last, err := s.ex.OutboxLastSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := s.FanOut(t.Context(), now, 100); err != nil {
			t.Fatal(err)
		}
		cur, err := s.ex.RelayCursor(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if cur >= last {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("fan-out at %d of %d after 20 s", cur, last)
		}
		time.Sleep(10 * time.Millisecond) // polling the cursor with a deadline
	}
}

// claim leases up to limit deliveries of sink id at now.
func claim(t *testing.T, s *Store, id string, now time.Time, limit int) (uuid.UUID, []sink.Claimed) {
	t.Helper()
	lease := uuid.New()
	cs, err := s.ClaimDeliveries(t.Context(), "ws", id, now, lease, time.Minute, limit)
	if err != nil {
		t.Fatal(err)
	}
	return lease, cs
}

func seqsOf(cs []sink.Claimed) []int64 {
	out := make([]int64, len(cs))
	for i, c := range cs {
		out[i] = c.EventSeq
	}
	return out
}

// TestRelayFanOutAndOrder: the fan-out makes one delivery per event and
// enabled sink of its workspace that wants its type, only for events
// after the sink's creation; a claim takes only the lowest pending event
// of each subject, and the next of a subject once the earlier one is
// delivered or failed; a lease that ran out is claimed again and the old
// lease's settle writes nothing; on both databases.
func TestRelayFanOutAndOrder(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		at := time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC)
		before := putEvent(t, s, "ws", "job.queued", "job-0", at)
		all, err := s.CreateSink(ctx, webhookSink("ws", "all"))
		if err != nil {
			t.Fatal(err)
		}
		if all.AfterSeq != before {
			t.Fatalf("sink after_seq %d, want %d", all.AfterSeq, before)
		}
		if _, err := s.CreateSink(ctx, webhookSink("ws", "done", "job.succeeded")); err != nil {
			t.Fatal(err)
		}
		off, err := s.CreateSink(ctx, webhookSink("ws", "off"))
		if err != nil {
			t.Fatal(err)
		}
		f := false
		if _, err := s.UpdateSink(ctx, "ws", off.ID, sink.Patch{Enabled: &f}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateSink(ctx, webhookSink("other", "all")); err != nil {
			t.Fatal(err)
		}
		a1 := putEvent(t, s, "ws", "job.queued", "job-a", at)
		b1 := putEvent(t, s, "ws", "job.queued", "job-b", at)
		a2 := putEvent(t, s, "ws", "job.started", "job-a", at)
		a3 := putEvent(t, s, "ws", "job.succeeded", "job-a", at)
		b2 := putEvent(t, s, "ws", "job.started", "job-b", at)
		fanAll(t, s, at)

		list := func(id string) []sink.Delivery {
			t.Helper()
			ds, err := s.ListDeliveries(ctx, "ws", id, sink.DeliveryFilter{})
			if err != nil {
				t.Fatal(err)
			}
			return ds
		}
		if ds := list("all"); len(ds) != 5 || ds[0].EventSeq != b2 || ds[4].EventSeq != a1 || ds[0].Status != sink.StatusPending {
			t.Fatalf("deliveries of all: %+v", ds)
		}
		if ds := list("done"); len(ds) != 1 || ds[0].EventSeq != a3 || ds[0].EventType != "job.succeeded" {
			t.Fatalf("deliveries of done: %+v", ds)
		}
		if ds := list("off"); len(ds) != 0 {
			t.Fatalf("a disabled sink got %d deliveries", len(ds))
		}
		if ds, _ := s.ListDeliveries(ctx, "other", "all", sink.DeliveryFilter{}); len(ds) != 0 {
			t.Fatalf("another workspace's sink got %d deliveries", len(ds))
		}

		// Only the head of each subject is claimable.
		lease, cs := claim(t, s, "all", at, 10)
		if got := seqsOf(cs); len(got) != 2 || got[0] != a1 || got[1] != b1 {
			t.Fatalf("first claim %v, want [%d %d]", got, a1, b1)
		}
		if c := cs[0]; c.Attempts != 1 || c.Event.ID != c.EventID || c.Event.Subject != "job-a" || string(c.Event.Type) != "job.queued" ||
			!c.Event.Time.Equal(at) || len(c.Event.Data) == 0 {
			t.Fatalf("claimed %+v", c)
		}
		if _, more := claim(t, s, "all", at, 10); len(more) != 0 {
			t.Fatalf("claimed %v while the heads are leased", seqsOf(more))
		}
		// job-a's head delivered: its next is claimable; job-b's head
		// fails and backs off, holding job-b's next back.
		if st, err := s.SettleDelivery(ctx, cs[0], lease, at, nil); err != nil || st != sink.StatusDelivered {
			t.Fatalf("settle delivered: %s, %v", st, err)
		}
		if st, err := s.SettleDelivery(ctx, cs[1], lease, at, errors.New("receiver answered 500")); err != nil || st != sink.StatusPending {
			t.Fatalf("settle failed: %s, %v", st, err)
		}
		lease2, cs2 := claim(t, s, "all", at, 10)
		if got := seqsOf(cs2); len(got) != 1 || got[0] != a2 {
			t.Fatalf("second claim %v, want [%d]", got, a2)
		}
		// After its 1 s backoff job-b's head is due again (attempt 2).
		_, cs3 := claim(t, s, "all", at.Add(time.Second), 10)
		if got := seqsOf(cs3); len(got) != 1 || got[0] != b1 || cs3[0].Attempts != 2 || cs3[0].LastError != "receiver answered 500" {
			t.Fatalf("claim after the backoff %+v, want b1 at attempt 2", cs3)
		}
		// a2's lease runs out: claimed again; the old lease settles nothing.
		lease4, cs4 := claim(t, s, "all", at.Add(2*time.Minute), 10)
		if got := seqsOf(cs4); len(got) != 2 || got[0] != b1 || got[1] != a2 {
			t.Fatalf("claim after the leases ran out %v", got)
		}
		if st, err := s.SettleDelivery(ctx, cs2[0], lease2, at, nil); err != nil || st != "" {
			t.Fatalf("a settle under a lost lease wrote %q, %v", st, err)
		}
		for _, c := range cs4 {
			if st, err := s.SettleDelivery(ctx, c, lease4, at.Add(2*time.Minute), nil); err != nil || st != sink.StatusDelivered {
				t.Fatalf("settle %d: %s, %v", c.EventSeq, st, err)
			}
		}
		_, cs5 := claim(t, s, "all", at.Add(2*time.Minute), 10)
		if got := seqsOf(cs5); len(got) != 2 || got[0] != a3 || got[1] != b2 {
			t.Fatalf("claim of the tails %v, want [%d %d]", got, a3, b2)
		}
		if c, err := s.DeliveryCounts(ctx, "ws", "all"); err != nil || len(c) != 2 || c[sink.StatusDelivered] != 3 || c[sink.StatusPending] != 2 {
			t.Fatalf("DeliveryCounts = %v, %v; want 3 delivered, 2 pending", c, err)
		}
		if ds, _ := s.ListDeliveries(ctx, "ws", "all", sink.DeliveryFilter{Status: sink.StatusDelivered}); len(ds) != 3 ||
			ds[0].DeliveredAt == nil || ds[2].EventSeq != a1 {
			t.Fatalf("delivered: %+v", ds)
		}
	})
}

// TestRelayRetryWindow: a delivery failing for 24 h is failed for good
// (and shown); the subject's next event then goes out; a sink back up
// makes its backed-off deliveries due at once; on both databases.
func TestRelayRetryWindow(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		at := time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC)
		if _, err := s.CreateSink(ctx, webhookSink("ws", "w")); err != nil {
			t.Fatal(err)
		}
		first := putEvent(t, s, "ws", "job.queued", "job-a", at)
		second := putEvent(t, s, "ws", "job.started", "job-a", at)
		fanAll(t, s, at)
		now := at
		var st sink.Status
		for i := 0; st != sink.StatusFailed; i++ {
			if i > 400 {
				t.Fatal("still retrying after 400 attempts")
			}
			lease, cs := claim(t, s, "w", now, 10)
			if len(cs) != 1 || cs[0].EventSeq != first {
				t.Fatalf("attempt %d at %s claimed %v", i+1, now, seqsOf(cs))
			}
			var err error
			if st, err = s.SettleDelivery(ctx, cs[0], lease, now, fmt.Errorf("HTTP 503 #%d", i+1)); err != nil {
				t.Fatal(err)
			}
			if st == sink.StatusPending {
				now = now.Add(sink.Backoff(cs[0].Attempts))
			}
		}
		if now.Sub(at) > sink.MaxAge || now.Sub(at) < sink.MaxAge-sink.MaxBackoff {
			t.Fatalf("failed for good %s after the first attempt, want about %s", now.Sub(at), sink.MaxAge)
		}
		ds, err := s.ListDeliveries(ctx, "ws", "w", sink.DeliveryFilter{Status: sink.StatusFailed})
		if err != nil || len(ds) != 1 || ds[0].FailedAt == nil || ds[0].LastError == "" || ds[0].Attempts < 20 {
			t.Fatalf("failed deliveries %+v, %v", ds, err)
		}
		lease, cs := claim(t, s, "w", now, 10)
		if len(cs) != 1 || cs[0].EventSeq != second {
			t.Fatalf("after the failure claimed %v, want the next event %d", seqsOf(cs), second)
		}
		// It fails once (due in 1 s), the sink comes back: due now.
		if _, err := s.SettleDelivery(ctx, cs[0], lease, now, errors.New("down")); err != nil {
			t.Fatal(err)
		}
		if _, cs := claim(t, s, "w", now, 10); len(cs) != 0 {
			t.Fatalf("claimed %v during the backoff", seqsOf(cs))
		}
		if err := s.RetryDeliveriesNow(ctx, "ws", "w", now); err != nil {
			t.Fatal(err)
		}
		if _, cs := claim(t, s, "w", now, 10); len(cs) != 1 {
			t.Fatalf("RetryDeliveriesNow: claimed %v", seqsOf(cs))
		}
	})
}

// TestRelaySweep: settled deliveries older than the retention go with the
// sweep, then the outbox events no delivery names; a pending delivery
// keeps its event; a deleted sink takes its deliveries; on both databases.
func TestRelaySweep(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		at := time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC)
		if _, err := s.CreateSink(ctx, webhookSink("ws", "w")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateSink(ctx, webhookSink("ws", "gone")); err != nil {
			t.Fatal(err)
		}
		done := putEvent(t, s, "ws", "job.queued", "job-a", at)
		waiting := putEvent(t, s, "ws", "job.queued", "job-b", at)
		fanAll(t, s, at)
		lease, cs := claim(t, s, "w", at, 1)
		if len(cs) != 1 || cs[0].EventSeq != done {
			t.Fatalf("claimed %v", seqsOf(cs))
		}
		if _, err := s.SettleDelivery(ctx, cs[0], lease, at, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteSink(ctx, "ws", "gone"); err != nil {
			t.Fatal(err)
		}
		if err := s.sweepEvents(ctx, at.Add(time.Hour), 1); err != nil {
			t.Fatal(err)
		}
		ds, err := s.ListDeliveries(ctx, "ws", "w", sink.DeliveryFilter{})
		if err != nil || len(ds) != 1 || ds[0].EventSeq != waiting {
			t.Fatalf("after the sweep: %+v, %v", ds, err)
		}
		evs, err := s.EventsAfter(ctx, "ws", 0, 10)
		if err != nil || len(evs) != 1 || evs[0].Seq != waiting {
			t.Fatalf("outbox after the sweep: %+v, %v", evs, err)
		}
	})
}
