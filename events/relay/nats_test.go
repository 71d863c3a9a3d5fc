package relay_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/internal/eventtest"
	"github.com/windforce/windforce/internal/testdb"
)

// streamMsg is one message of a stream as the test reads it back.
type streamMsg struct {
	subject, msgID, ceID, ceSubject string
	n                               int
}

// readStream reads every message of the stream with its CloudEvent.
func readStream(t *testing.T, url, name string) []streamMsg {
	t.Helper()
	var out []streamMsg
	for i, m := range eventtest.ReadStream(t, url, name) {
		var ce struct {
			ID, Subject string
			Data        struct{ N int }
		}
		if err := json.Unmarshal(m.Data, &ce); err != nil {
			t.Fatalf("message %d: %s: %v", i, m.Data, err)
		}
		out = append(out, streamMsg{subject: m.Subject, msgID: m.MsgID, ceID: ce.ID, ceSubject: ce.Subject, n: ce.Data.N})
	}
	return out
}

// checkStream fails unless the stream holds exactly the events, once
// each (Nats-Msg-Id = CloudEvent id = outbox id), each job's in order
// (its n rising: with every event there once, that is the exact order),
// on {prefix}.ws.{type}.
func checkStream(t *testing.T, msgs []streamMsg, all []event, prefix string) {
	t.Helper()
	want := map[string]event{}
	for _, ev := range all {
		want[ev.id.String()] = ev
	}
	seen := map[string]bool{}
	next := map[string]int{}
	for _, m := range msgs {
		ev, ok := want[m.msgID]
		switch {
		case !ok:
			t.Errorf("message %s is no event of the outbox", m.msgID)
			continue
		case seen[m.msgID]:
			t.Errorf("event %s is in the stream twice", m.msgID)
		case m.ceID != m.msgID || m.subject != prefix+".ws."+ev.typ || m.ceSubject != ev.subject:
			t.Errorf("message %+v for event %+v", m, ev)
		case m.n < next[ev.subject]:
			t.Errorf("%s: event #%d in the stream after #%d", ev.subject, m.n, next[ev.subject]-1)
		}
		seen[m.msgID] = true
		next[ev.subject] = m.n + 1
	}
	if len(seen) != len(want) {
		t.Errorf("the stream holds %d of the %d events", len(seen), len(want))
	}
}

// TestNATSDelivery: events go to JetStream on {subject}.{workspace}.{type}
// with Nats-Msg-Id = the event id; the stream is created when missing
// (named after the prefix), and an existing stream covering the prefix is
// used as it is; every delivery is delivered once the stream acked it;
// on both databases, against a nats-server of the test's own.
func TestNATSDelivery(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d db) {
		ns := testdb.StartNATS(t)
		s := d.open(t)
		ctx := t.Context()
		// An existing stream for prefix "acme", under a name of its own.
		nc, err := nats.Connect(ns.URL)
		if err != nil {
			t.Fatal(err)
		}
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "MINE", Subjects: []string{"acme.>"}}); err != nil {
			t.Fatal(err)
		}
		nc.Close()
		for _, sk := range []sink.Sink{
			{Workspace: "ws", ID: "bus", Kind: sink.KindNATS, URL: ns.URL},
			{Workspace: "ws", ID: "acme", Kind: sink.KindNATS, URL: ns.URL, Subject: "acme", Types: []string{"job.succeeded"}},
		} {
			if _, err := s.CreateSink(ctx, sk); err != nil {
				t.Fatal(err)
			}
		}
		startRelay(t, s, 2*time.Second)
		var all, done []event
		for j := range 5 {
			for n, typ := range jobLife {
				ev := putEvent(t, s, "ws", typ, fmt.Sprintf("job-%d", j), n)
				all = append(all, ev)
				if typ == "job.succeeded" {
					done = append(done, ev)
				}
			}
		}
		waitSettled(t, s, "bus", len(all))
		waitSettled(t, s, "acme", len(done))
		checkStream(t, readStream(t, ns.URL, "WINDFORCE"), all, "windforce")
		msgs := readStream(t, ns.URL, "MINE")
		if len(msgs) != len(done) {
			t.Fatalf("stream MINE holds %d messages, want the %d job.succeeded", len(msgs), len(done))
		}
		checkStream(t, msgs, done, "acme") // across jobs in any order
		if n := eventtest.StreamCount(ns.URL, "ACME"); n != 0 {
			t.Errorf("a stream ACME was made beside the existing one (%d messages)", n)
		}
	})
}

// TestNATSDownNoLoss: NATS is killed for 30 s under a stream of jobs'
// events and restarted on the same store dir: no event is lost, none is
// in the stream twice (the relay publishes again; Nats-Msg-Id dedups),
// each job's are in order, and delivery resumes within seconds of the
// return; on both databases.
func TestNATSDownNoLoss(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d db) {
		ns := testdb.StartNATS(t)
		s := d.open(t)
		if _, err := s.CreateSink(t.Context(), sink.Sink{Workspace: "ws", ID: "bus", Kind: sink.KindNATS, URL: ns.URL}); err != nil {
			t.Fatal(err)
		}
		startRelay(t, s, 2*time.Second)

		// A job's life every 100 ms, for 33 s, five jobs at a time.
		var mu sync.Mutex
		var all []event
		write := func(job, n int) {
			ev := putEvent(t, s, "ws", jobLife[n], fmt.Sprintf("job-%03d", job), n)
			mu.Lock()
			all = append(all, ev)
			mu.Unlock()
		}
		stop := time.Now().Add(33 * time.Second)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for step := 0; time.Now().Before(stop) && t.Context().Err() == nil; step++ {
				for k := range len(jobLife) {
					if job := step - k; job >= 0 {
						write(job, k)
					}
				}
				time.Sleep(100 * time.Millisecond) // the pace of the stream of jobs
			}
		}()
		eventually(t, 30*time.Second, "nothing reached the stream before the outage", func() bool {
			return eventtest.StreamCount(ns.URL, "WINDFORCE") > 0
		})
		ns.Kill()
		time.Sleep(30 * time.Second) // NATS stays down for 30 s (the scenario under test)
		ns.Start()
		back := time.Now()
		<-done
		mu.Lock()
		total := len(all)
		mu.Unlock()
		eventually(t, 30*time.Second, "not every event in the stream after NATS returned", func() bool {
			return eventtest.StreamCount(ns.URL, "WINDFORCE") >= uint64(total)
		})
		t.Logf("%s: %d events; all in the stream %s after NATS returned", d.name, total, time.Since(back).Round(100*time.Millisecond))
		waitSettled(t, s, "bus", total)
		checkStream(t, readStream(t, ns.URL, "WINDFORCE"), all, "windforce")
	})
}
