package source_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/internal/gittest"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/store"
)

// silentWS has a source but no sink.
const silentWS = "ws-silent"

// eventReader reads one workspace's events as a reader of the outbox
// does, going on from the last seq it saw.
type eventReader struct {
	t     *testing.T
	s     *store.Store
	after int64
}

// withSink gives workspace ws a sink (a workspace records its events only
// while it has one) and reads its events from now on.
func (e *env) withSink(t *testing.T) *eventReader {
	t.Helper()
	s := e.db.(*store.Store)
	if _, err := s.CreateSink(t.Context(), sink.Sink{Workspace: ws, ID: "bus", Kind: sink.KindNATS,
		URL: "nats://127.0.0.1:4222", Subject: "windforce", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	return &eventReader{t: t, s: s}
}

// next reads until n events have shown (on Postgres an event shows once
// the transactions open at its commit have ended) and fails unless there
// are exactly n of the source "main", each of typ. The steps before that
// must write none are followed by one that writes one, so an event they
// wrongly wrote is among those read.
func (r *eventReader) next(what string, n int, typ events.Type) []source.View {
	r.t.Helper()
	var got []events.Event
	deadline := time.Now().Add(20 * time.Second)
	for len(got) < n && time.Now().Before(deadline) {
		evs, err := r.s.EventsAfter(r.t.Context(), ws, r.after, 100)
		if err != nil {
			r.t.Fatal(err)
		}
		got = append(got, evs...)
		if len(evs) > 0 {
			r.after = evs[len(evs)-1].Seq
		} else {
			time.Sleep(20 * time.Millisecond) // polling the outbox, as a reader does
		}
	}
	if len(got) != n {
		r.t.Fatalf("%s: %d events, want %d %s: %+v", what, len(got), n, typ, got)
	}
	views := make([]source.View, n)
	for i, e := range got {
		if e.Type != typ || e.Subject != "main" {
			r.t.Fatalf("%s: event %d is %s %s, want %s main", what, i, e.Type, e.Subject, typ)
		}
		if err := json.Unmarshal(e.Data, &views[i]); err != nil {
			r.t.Fatalf("%s: data %s: %v", what, e.Data, err)
		}
	}
	return views
}

// TestSyncEvents: syncs of a real git repository through the Syncer. A
// sync that writes a new commit into the catalog writes one
// source.synced with that commit; a sync finding the branch up to date
// writes none; a bad manifest committed and pushed fails the sync, writes
// one source.sync_failed with the source's error and the commit the
// catalog keeps, and leaves the catalog as it was; a workspace without a
// sink records nothing. On both backends.
func TestSyncEvents(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		r, good := e.helloSource(t)
		if err := e.syncer.AddSource(t.Context(), catalog.Source{Workspace: silentWS, ID: "main", URL: r.URL, Branch: "main"}); err != nil {
			t.Fatal(err)
		}
		rd := e.withSink(t)

		e.sync(t)
		if v := rd.next("first sync", 1, events.SourceSynced)[0]; v.Commit != good || v.Error != "" || v.SyncedAt == nil || v.URL != r.URL {
			t.Fatalf("source.synced shows %+v, want commit %s", v, good)
		}

		if res := e.sync(t); !res.Unchanged {
			t.Fatalf("second sync %+v, want unchanged", res)
		}
		if _, err := e.syncer.Sync(t.Context(), silentWS, "main"); err != nil {
			t.Fatal(err)
		}
		r.Write(t, map[string]string{"windforce.yaml": "apps:\n  hello:\n    entrypoint: src/main.ts\n    runtime: cobol\n    actions: {a: {}}\n"})
		bad := r.CommitPush(t, "bad manifest")
		if _, err := e.syncer.Sync(t.Context(), ws, "main"); err == nil {
			t.Fatal("a bad manifest synced")
		}
		v := rd.next("an up-to-date sync, then a bad manifest", 1, events.SourceSyncFailed)[0]
		want := e.source(t).Error
		if v.Commit != good || v.Error != want || !strings.Contains(v.Error, "cobol") || !strings.Contains(v.Error, bad[:12]) {
			t.Fatalf("source.sync_failed shows %+v, want commit %s and the error %q", v, good, want)
		}
		e.requireCatalogAt(t, good)

		// Fixed: the next commit syncs, its event names it.
		r.CopyDir(t, gittest.Example("hello"))
		fixed := r.CommitPush(t, "fixed")
		e.sync(t)
		if v := rd.next("fixed", 1, events.SourceSynced)[0]; v.Commit != fixed || v.Error != "" {
			t.Fatalf("source.synced after the fix shows %+v, want commit %s", v, fixed)
		}
		all, err := rd.s.EventsAfter(t.Context(), silentWS, 0, 100)
		if err != nil || len(all) != 0 {
			t.Fatalf("the workspace without a sink recorded %+v (%v)", all, err)
		}
	})
}
