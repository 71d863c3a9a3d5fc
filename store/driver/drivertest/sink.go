package drivertest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

var _ = register("Sink", testSink)

// sinkBase is the sink cases' reference time, on a whole second so both
// databases keep it exactly.
var sinkBase = time.Date(2031, 7, 8, 9, 10, 11, 0, time.UTC)

// newSink is an enabled webhook sink id of ws created at sinkBase.
func newSink(ws, id string) sink.Sink {
	return sink.Sink{Workspace: ws, ID: id, Kind: sink.KindWebhook, URL: "https://example.com/" + id,
		Subject: "windforce", Types: []string{"job.succeeded"}, Secret: "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3",
		Enabled: true, AfterSeq: 7, CreatedBy: "alice", CreatedAt: sinkBase}
}

// mustSink stores s through ex.
func mustSink(t *testing.T, ex driver.Executor, s sink.Sink) sink.Sink {
	t.Helper()
	if err := ex.SinkInsert(t.Context(), s); err != nil {
		t.Fatalf("SinkInsert: %v", err)
	}
	return s
}

// getSink reads sink id of ws, which must exist.
func getSink(t *testing.T, ex driver.Executor, ws, id string) sink.Sink {
	t.Helper()
	s, ok, err := ex.SinkGet(t.Context(), ws, id)
	if err != nil || !ok {
		t.Fatalf("SinkGet %s/%s: ok %v, %v", ws, id, ok, err)
	}
	return s
}

// sameSink compares every stored field.
func sameSink(a, b sink.Sink) bool {
	return a.Workspace == b.Workspace && a.ID == b.ID && a.Kind == b.Kind && a.URL == b.URL &&
		a.Subject == b.Subject && slices.Equal(a.Types, b.Types) && a.Secret == b.Secret &&
		a.Enabled == b.Enabled && a.AfterSeq == b.AfterSeq && a.CreatedBy == b.CreatedBy &&
		a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt)
}

// testSink checks the event sink operations.
func testSink(t *testing.T, open Open) {
	t.Run("InsertAndRead", func(t *testing.T) { testSinkInsertAndRead(t, open) })
	t.Run("InsertRefused", func(t *testing.T) { testSinkInsertRefused(t, open) })
	t.Run("UpdateAndDelete", func(t *testing.T) { testSinkUpdateAndDelete(t, open) })
}

func testSinkInsertAndRead(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	a := mustSink(t, ex, newSink("ws", "a"))
	a.UpdatedAt = sinkBase
	b := newSink("ws", "b")
	b.Kind, b.URL, b.Secret, b.Types, b.Subject = sink.KindNATS, "nats://127.0.0.1:4222", "", []string{}, "acme.x"
	b.CreatedAt = sinkBase.Add(time.Second)
	b = mustSink(t, ex, b)
	b.UpdatedAt = b.CreatedAt
	mustSink(t, ex, newSink("other", "a"))
	if got := getSink(t, ex, "ws", "a"); !sameSink(got, a) {
		t.Fatalf("SinkGet = %+v, want %+v", got, a)
	}
	list, err := ex.SinkList(t.Context(), "ws")
	if err != nil || len(list) != 2 || !sameSink(list[0], a) || !sameSink(list[1], b) {
		t.Fatalf("SinkList(ws) = %+v, %v", list, err)
	}
	if all, err := ex.SinkList(t.Context(), ""); err != nil || len(all) != 3 {
		t.Fatalf("SinkList(all) = %d sinks, %v; want 3", len(all), err)
	}
	if _, ok, err := ex.SinkGet(t.Context(), "ws", "none"); ok || err != nil {
		t.Fatalf("SinkGet of an unknown sink: ok %v, %v", ok, err)
	}
	if err := ex.SinkInsert(t.Context(), newSink("ws", "a")); !errors.Is(err, spine.ErrConflict) {
		t.Fatalf("a second sink a: %v, want spine.ErrConflict", err)
	}
	if seq, err := ex.OutboxLastSeq(t.Context()); err != nil || seq != 0 {
		t.Fatalf("OutboxLastSeq of an empty outbox = %d, %v", seq, err)
	}
}

// testSinkInsertRefused: the schema refuses a webhook without a secret and
// a nats sink with one, whatever the core checked.
func testSinkInsertRefused(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	noSecret := newSink("ws", "a")
	noSecret.Secret = ""
	natsSecret := newSink("ws", "b")
	natsSecret.Kind = sink.KindNATS
	badKind := newSink("ws", "c")
	badKind.Kind = "kafka"
	for _, s := range []sink.Sink{noSecret, natsSecret, badKind} {
		if err := ex.SinkInsert(t.Context(), s); !errors.Is(err, spine.ErrInvalid) {
			t.Errorf("SinkInsert %+v: %v, want spine.ErrInvalid", s, err)
		}
	}
	if list, err := ex.SinkList(t.Context(), ""); err != nil || len(list) != 0 {
		t.Fatalf("refused inserts stored %d sinks, %v", len(list), err)
	}
}

func testSinkUpdateAndDelete(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	s := mustSink(t, ex, newSink("ws", "a"))
	err := ex.Tx(t.Context(), func(tx driver.Executor) error {
		locked, ok, err := tx.SinkLock(t.Context(), "ws", "a")
		if err != nil || !ok || !sameSink(locked, sink.Sink{UpdatedAt: sinkBase, Workspace: s.Workspace, ID: s.ID,
			Kind: s.Kind, URL: s.URL, Subject: s.Subject, Types: s.Types, Secret: s.Secret, Enabled: true,
			AfterSeq: 7, CreatedBy: "alice", CreatedAt: sinkBase}) {
			t.Errorf("SinkLock = %+v, %v, %v", locked, ok, err)
		}
		locked.URL, locked.Subject, locked.Types, locked.Enabled = "http://x/y", "z", []string{}, false
		locked.Secret = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY4"
		locked.UpdatedAt = sinkBase.Add(time.Hour)
		ok, err = tx.SinkUpdate(t.Context(), locked)
		if err != nil || !ok {
			t.Errorf("SinkUpdate: ok %v, %v", ok, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := getSink(t, ex, "ws", "a")
	if got.URL != "http://x/y" || got.Subject != "z" || len(got.Types) != 0 || got.Enabled ||
		got.Secret != "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY4" || !got.UpdatedAt.Equal(sinkBase.Add(time.Hour)) ||
		!got.CreatedAt.Equal(sinkBase) || got.AfterSeq != 7 || got.Kind != sink.KindWebhook {
		t.Fatalf("after SinkUpdate: %+v", got)
	}
	if ok, err := ex.SinkUpdate(t.Context(), newSink("ws", "none")); ok || err != nil {
		t.Fatalf("SinkUpdate of an unknown sink: ok %v, %v", ok, err)
	}
	if ok, err := ex.SinkDelete(t.Context(), "ws", "a"); !ok || err != nil {
		t.Fatalf("SinkDelete: ok %v, %v", ok, err)
	}
	if ok, err := ex.SinkDelete(t.Context(), "ws", "a"); ok || err != nil {
		t.Fatalf("second SinkDelete: ok %v, %v", ok, err)
	}
	if _, ok, _ := ex.SinkGet(t.Context(), "ws", "a"); ok {
		t.Fatal("the sink is still there")
	}
}
