package store

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/spine"
)

// The source events tests' workspaces: srcWS has a sink, silentSrcWS none.
const (
	srcWS       = "ws-src"
	silentSrcWS = "ws-src-silent"
)

// sourceFlow is one store with a source "main" in srcWS (and the same in
// silentSrcWS), read back event by event.
type sourceFlow struct {
	t     *testing.T
	s     *Store
	after int64
}

// newSourceFlow gives srcWS a sink and both workspaces a source "main"
// whose stored URL carries credentials (a row from before they were
// refused): its events must show it redacted.
func newSourceFlow(t *testing.T, s *Store) *sourceFlow {
	t.Helper()
	if _, err := s.CreateSink(t.Context(), sink.Sink{Workspace: srcWS, ID: "n", Kind: sink.KindNATS,
		URL: "nats://127.0.0.1:4222", Subject: "windforce", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	for _, ws := range []string{srcWS, silentSrcWS} {
		for _, id := range []string{"main", "two"} {
			src := catalog.Source{Workspace: ws, ID: id, URL: "https://ci:tok-" + id + "@git.example.com/r.git", Branch: "main"}
			if err := s.PutSource(t.Context(), src); err != nil {
				t.Fatal(err)
			}
		}
	}
	return &sourceFlow{t: t, s: s}
}

// helloAt is the one app of source "main" at commit.
func helloAt(commit string) []catalog.App {
	return []catalog.App{{Key: "hello", Entrypoint: "main.ts", Runtime: "bun", Timeout: time.Minute,
		Tag: spine.DefaultTag, Retry: spine.DefaultRetry, Actions: []catalog.Action{{Key: "greet"}}}}
}

func (f *sourceFlow) apply(ws, id, commit string) error {
	return f.s.ApplySync(f.t.Context(), catalog.SyncParams{Workspace: ws, SourceID: id, Commit: commit, Apps: helloAt(commit)})
}

func (f *sourceFlow) mustApply(ws, id, commit string) {
	f.t.Helper()
	if err := f.apply(ws, id, commit); err != nil {
		f.t.Fatalf("apply %s/%s at %.8s: %v", ws, id, commit, err)
	}
}

func (f *sourceFlow) fail(ws, id, message string) {
	f.t.Helper()
	if err := f.s.RecordSyncError(f.t.Context(), ws, id, message); err != nil {
		f.t.Fatalf("record sync error of %s/%s: %v", ws, id, err)
	}
}

// expect reads srcWS's events until want's count have shown (on Postgres
// an event shows once the transactions open at its commit have ended)
// and checks they are exactly want, in order: type, subject, data the
// source's API view as it is now, event time the change's. A step that
// must write nothing is followed by one that writes an event, so its
// expect sees any event the first wrongly wrote.
func (f *sourceFlow) expect(what string, want ...events.Event) []events.Event {
	f.t.Helper()
	var got []events.Event
	deadline := time.Now().Add(20 * time.Second)
	for len(got) < len(want) && time.Now().Before(deadline) {
		evs, err := f.s.EventsAfter(f.t.Context(), srcWS, f.after, 100)
		if err != nil {
			f.t.Fatalf("%s: EventsAfter: %v", what, err)
		}
		got = append(got, evs...)
		if len(evs) == 0 {
			time.Sleep(20 * time.Millisecond) // polling the outbox, as a reader does
		}
	}
	if len(got) != len(want) {
		f.t.Fatalf("%s: %d events %v, want %d", what, len(got), eventNames(got), len(want))
	}
	f.after = got[len(got)-1].Seq
	for i, w := range want {
		if got[i].Type != w.Type || got[i].Subject != w.Subject || got[i].Workspace != srcWS || got[i].ID.Version() != 7 {
			f.t.Fatalf("%s: event %d is %s %s in %s (id %s), want %s %s", what, i, got[i].Type, got[i].Subject,
				got[i].Workspace, got[i].ID, w.Type, w.Subject)
		}
	}
	f.requireView(what, got[len(got)-1])
	return got
}

// requireView checks e's data against what GET /api/w/{ws}/sources shows
// of its source now, and its time against the source's time of the
// change.
func (f *sourceFlow) requireView(what string, e events.Event) source.View {
	f.t.Helper()
	src, err := f.s.GetSource(f.t.Context(), srcWS, e.Subject)
	if err != nil {
		f.t.Fatal(err)
	}
	want := source.ViewOf(src)
	var got source.View
	if err := json.Unmarshal(e.Data, &got); err != nil {
		f.t.Fatalf("%s: data %s: %v", what, e.Data, err)
	}
	if (got.SyncedAt == nil) != (want.SyncedAt == nil) || got.SyncedAt != nil && !got.SyncedAt.Equal(*want.SyncedAt) {
		f.t.Fatalf("%s: data synced_at %v, the API's %v", what, got.SyncedAt, want.SyncedAt)
	}
	got.SyncedAt = want.SyncedAt
	if got != want {
		f.t.Fatalf("%s: data %+v, the API shows %+v", what, got, want)
	}
	at := src.SyncedAt
	if e.Type == events.SourceSyncFailed {
		at = src.ErrorAt
	}
	if at == nil || !e.Time.Equal(*at) {
		f.t.Fatalf("%s: %s at %s, the source's change at %v", what, e.Type, e.Time, at)
	}
	if strings.Contains(string(e.Data), "tok-") || !strings.Contains(got.URL, "***@git.example.com") {
		f.t.Fatalf("%s: the event shows the stored credentials: %s", what, e.Data)
	}
	return got
}

// requireCatalogAt fails unless the app of srcWS is at commit.
func (f *sourceFlow) requireCatalogAt(commit string) {
	f.t.Helper()
	apps, err := f.s.ListApps(f.t.Context(), srcWS)
	if err != nil || len(apps) != 1 || apps[0].CommitSHA != commit || apps[0].SourceID != "main" {
		f.t.Fatalf("catalog %+v, %v; want hello of main at %.8s", apps, err, commit)
	}
}

func srcEvent(typ events.Type, id string) events.Event { return events.Event{Type: typ, Subject: id} }

// TestSourceEvents: a sync that writes a commit into the catalog writes
// one source.synced in its transaction, a failed one one
// source.sync_failed, each with the source's API view (credentials
// redacted) as data; re-applying the commit the source holds, a failure
// repeating the source's error and a refused apply write none; a
// workspace without a sink records nothing; on both databases.
func TestSourceEvents(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		f := newSourceFlow(t, s)
		commitA, commitB := strings.Repeat("a", 40), strings.Repeat("b", 40)

		f.mustApply(srcWS, "main", commitA)
		evs := f.expect("first sync", srcEvent(events.SourceSynced, "main"))
		if v := f.requireView("first sync", evs[0]); v.Commit != commitA || v.Error != "" {
			t.Fatalf("first sync shows %+v", v)
		}

		// The commit the source holds, applied again (its tree had left
		// the cache): nothing changed, no event. The failure after it is
		// the only event.
		f.mustApply(srcWS, "main", commitA)
		bad := "validate failed at commit bbbbbbbbbbbb: windforce.yaml: apps.hello.runtime: cobol is not a runtime"
		f.fail(srcWS, "main", bad)
		evs = f.expect("re-apply, then a failure", srcEvent(events.SourceSyncFailed, "main"))
		if v := f.requireView("failure", evs[0]); v.Commit != commitA || v.Error != bad {
			t.Fatalf("failure shows %+v", v)
		}
		f.requireCatalogAt(commitA)

		// The poll failing the same way again writes none; another
		// failure does.
		f.fail(srcWS, "main", bad)
		other := "fetch failed: git ls-remote: connection refused"
		f.fail(srcWS, "main", other)
		evs = f.expect("the same failure, then another", srcEvent(events.SourceSyncFailed, "main"))
		if v := f.requireView("another failure", evs[0]); v.Error != other {
			t.Fatalf("another failure shows %+v", v)
		}

		// The same commit synced after a failure clears the error: an event.
		f.mustApply(srcWS, "main", commitA)
		evs = f.expect("recovered", srcEvent(events.SourceSynced, "main"))
		if v := f.requireView("recovered", evs[0]); v.Commit != commitA || v.Error != "" {
			t.Fatalf("recovered shows %+v", v)
		}

		// An apply the catalog refuses (another source's app key) writes
		// nothing; its recorded failure does, and leaves the catalog.
		if err := f.apply(srcWS, "two", commitB); !errors.Is(err, catalog.ErrConflict) {
			t.Fatalf("apply of a taken app key: %v", err)
		}
		f.fail(srcWS, "two", "catalog failed at commit bbbbbbbbbbbb: app \"hello\" belongs to source \"main\"")
		f.expect("a refused apply, then its failure", srcEvent(events.SourceSyncFailed, "two"))
		f.requireCatalogAt(commitA)

		// No sink, no event: the silent workspace's syncs, then a marker
		// event in srcWS, after which everything before is final.
		f.mustApply(silentSrcWS, "main", commitA)
		f.fail(silentSrcWS, "main", bad)
		f.mustApply(silentSrcWS, "main", commitB)
		f.mustApply(srcWS, "main", commitB)
		f.expect("a new commit", srcEvent(events.SourceSynced, "main"))
		f.requireCatalogAt(commitB)
		all, err := s.EventsAfter(t.Context(), "", 0, MaxEventsLimit)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range all {
			if e.Workspace == silentSrcWS {
				t.Errorf("a workspace without a sink recorded %s %s", e.Type, e.Subject)
			}
		}
	})
}

// TestSourceEventAndChangeAllOrNothing: a sync whose event cannot be
// written changes nothing (the catalog stays at the old commit), and a
// failure whose event cannot be written is not recorded either.
func TestSourceEventAndChangeAllOrNothing(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		f := newSourceFlow(t, s)
		commitA, commitB := strings.Repeat("a", 40), strings.Repeat("b", 40)
		f.mustApply(srcWS, "main", commitA)
		f.expect("first sync", srcEvent(events.SourceSynced, "main"))

		faulty := &Store{drv: s.drv, ex: failEvents{s.ex}}
		err := faulty.ApplySync(t.Context(), catalog.SyncParams{Workspace: srcWS, SourceID: "main", Commit: commitB, Apps: helloAt(commitB)})
		if !errors.Is(err, errEventWrite) {
			t.Fatalf("apply with a failing event write: %v", err)
		}
		f.requireCatalogAt(commitA)
		if err := faulty.RecordSyncError(t.Context(), srcWS, "main", "fetch failed"); !errors.Is(err, errEventWrite) {
			t.Fatalf("record with a failing event write: %v", err)
		}
		if src, err := s.GetSource(t.Context(), srcWS, "main"); err != nil || src.Error != "" || src.Commit != commitA {
			t.Fatalf("source after the failed writes: %+v, %v", src, err)
		}
		// The next good write is the only event since.
		f.fail(srcWS, "main", "fetch failed")
		f.expect("a failure", srcEvent(events.SourceSyncFailed, "main"))
	})
}

// TestRelayOrdersSourceEvents: the relay keeps a source's events in order
// per sink as it does a job's (the subject is the source id): while the
// source's oldest pending event is not delivered its later ones wait, and
// another subject's events do not.
func TestRelayOrdersSourceEvents(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		at := time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC)
		if _, err := s.CreateSink(ctx, webhookSink(srcWS, "w")); err != nil {
			t.Fatal(err)
		}
		f := newSourceFlow(t, s)
		f.mustApply(srcWS, "main", strings.Repeat("a", 40))
		f.fail(srcWS, "main", "fetch failed")
		job := putEvent(t, s, srcWS, "job.queued", "job-x", at)
		f.mustApply(srcWS, "main", strings.Repeat("b", 40))
		evs := f.expect("two syncs and a failure", srcEvent(events.SourceSynced, "main"), srcEvent(events.SourceSyncFailed, "main"),
			events.Event{Type: events.JobQueued, Subject: "job-x"}, srcEvent(events.SourceSynced, "main"))
		fanAll(t, s, at)

		claim := func(now time.Time) []int64 {
			t.Helper()
			lease := uuid.New()
			cs, err := s.ClaimDeliveries(ctx, srcWS, "w", now, lease, time.Minute, 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				// The source's first event fails once (a receiver's 500).
				var sendErr error
				if c.EventSeq == evs[0].Seq && c.Attempts == 1 {
					sendErr = errors.New("receiver answered 500")
				}
				if _, err := s.SettleDelivery(ctx, c, lease, now, sendErr); err != nil {
					t.Fatal(err)
				}
			}
			return seqsOf(cs)
		}
		if got := claim(at); len(got) != 2 || got[0] != evs[0].Seq || got[1] != job {
			t.Fatalf("first claim %v, want the source's first event and the job's (%d, %d)", got, evs[0].Seq, job)
		}
		if got := claim(at); len(got) != 0 {
			t.Fatalf("claimed %v while the source's first event backs off", got)
		}
		for i, want := range []int64{evs[0].Seq, evs[1].Seq, evs[3].Seq} {
			if got := claim(at.Add(time.Duration(i+1) * time.Minute)); len(got) != 1 || got[0] != want {
				t.Fatalf("claim %d: %v, want [%d]", i, got, want)
			}
		}
	})
}
