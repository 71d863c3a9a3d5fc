package e2e_test

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/internal/eventtest"
	"github.com/windforce/windforce/internal/testdb"
)

// jobStream enqueues hello/greet through url every gap until stopped
// (at cleanup at the latest), and keeps the ids of the enqueues answered 201 (an enqueue
// while the server is dead fails, and is no job; one whose answer was
// lost is a job the outbox shows anyway).
type jobStream struct {
	mu   sync.Mutex
	ids  []string
	errs int
	// enqueued is signaled after each enqueue answered 201 (dropped when
	// nobody waits).
	enqueued chan struct{}
	stopOnce sync.Once
	stopCh   chan struct{}
	done     chan struct{}
}

func startJobStream(t *testing.T, url, token string, gap time.Duration) *jobStream {
	js := &jobStream{enqueued: make(chan struct{}, 1), stopCh: make(chan struct{}), done: make(chan struct{})}
	t.Cleanup(js.stop)
	stop := js.stopCh
	client := &http.Client{Timeout: 5 * time.Second}
	go func() {
		defer close(js.done)
		tick := time.NewTicker(gap)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			id, ok := tryEnqueue(client, url, token)
			js.mu.Lock()
			if ok {
				js.ids = append(js.ids, id)
			} else {
				js.errs++
			}
			js.mu.Unlock()
			if ok {
				select {
				case js.enqueued <- struct{}{}:
				default:
				}
			}
		}
	}()
	return js
}

// stop ends the stream and waits for its last enqueue.
func (js *jobStream) stop() {
	js.stopOnce.Do(func() { close(js.stopCh) })
	<-js.done
}

// tryEnqueue posts one hello/greet and returns its id when answered 201.
func tryEnqueue(client *http.Client, url, token string) (string, bool) {
	req, err := http.NewRequest("POST", url+"/api/w/ws/jobs/run/hello/greet", strings.NewReader(`{"name":"stream"}`))
	if err != nil {
		return "", false
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := client.Do(req)
	if err != nil {
		return "", false
	}
	defer res.Body.Close()
	var out struct{ ID string }
	if res.StatusCode != http.StatusCreated || json.NewDecoder(res.Body).Decode(&out) != nil {
		return "", false
	}
	return out.ID, true
}

// checkNATSStream fails unless the stream holds exactly the events, once
// each (Nats-Msg-Id = CloudEvent id), on windforce.ws.{type}, each job's
// in seq order.
func checkNATSStream(t *testing.T, msgs []eventtest.StreamMsg, evs []events.Event) {
	t.Helper()
	want := map[string]events.Event{}
	for _, ev := range evs {
		want[ev.ID.String()] = ev
	}
	seen := map[string]bool{}
	last := map[string]int64{} // per job, the seq of its last message
	for i, m := range msgs {
		ev, ok := want[m.MsgID]
		var ce cloudEvent
		err := json.Unmarshal(m.Data, &ce)
		switch {
		case !ok:
			t.Errorf("message %d (%s) is no event of the outbox", i, m.MsgID)
			continue
		case seen[m.MsgID]:
			t.Errorf("event %d (%s of %s) is in the stream twice", ev.Seq, ev.Type, ev.Subject)
		case err != nil || ce.ID != m.MsgID || ce.Subject != ev.Subject || ce.Type != "windforce."+string(ev.Type) ||
			m.Subject != "windforce.ws."+string(ev.Type):
			t.Errorf("message %d on %s: %s (%v), for event %+v", i, m.Subject, m.Data, err, ev)
		case ev.Seq < last[ev.Subject]:
			t.Errorf("job %s: event %d in the stream after event %d", ev.Subject, ev.Seq, last[ev.Subject])
		}
		seen[m.MsgID] = true
		last[ev.Subject] = max(last[ev.Subject], ev.Seq)
	}
	if len(seen) != len(want) {
		t.Errorf("the stream holds %d of the %d events", len(seen), len(want))
	}
}

// TestNATSServerSIGKILLedUnderJobs: a NATS sink (a nats-server of the
// test's own) gets the events of a stream of real jobs, one enqueued
// through the API every 100 ms for 4 s; the server is SIGKILLed at a
// random moment of it and restarted on the same database. Once every job
// has finished, every event of the outbox is in the JetStream stream
// exactly once (JetStream drops a re-publish by its Nats-Msg-Id), each
// job's queued, started, succeeded in order, and every delivery is
// delivered.
func TestNATSServerSIGKILLedUnderJobs(t *testing.T) {
	t.Parallel()
	ns := testdb.StartNATS(t)
	c := startEventsCluster(t)
	c.addSink(t, `{"id":"bus","kind":"nats","url":"`+ns.URL+`"}`)

	stream := startJobStream(t, c.api.url, eventsAdmin, 100*time.Millisecond)
	began := time.Now()
	killAfter := 500*time.Millisecond + rand.N(2500*time.Millisecond)
	time.Sleep(killAfter) // the random moment of the kill, under the stream
	// ... and right after an enqueue's commit: its event is likely not
	// published yet.
	select {
	case <-stream.enqueued:
	default:
	}
	select {
	case <-stream.enqueued:
	case <-time.After(10 * time.Second):
		t.Fatal("no enqueue answered for 10 s")
	}
	c.killServer(t)
	rows := c.outboxRows(t) // some committed, their publish cut short or never begun
	atKill, err := c.db.DeliveryCounts(t.Context(), "ws", "bus")
	if err != nil {
		t.Fatal(err)
	}
	c.restartServer(t)
	t.Logf("server SIGKILLed %s into the stream (outbox rows %d, deliveries %v), serving again %s later",
		killAfter.Round(time.Millisecond), rows, atKill, time.Since(began.Add(killAfter)).Round(100*time.Millisecond))
	time.Sleep(time.Until(began.Add(4 * time.Second))) // the rest of the stream's 4 s
	stream.stop()
	c.waitJobsDone(t, 60*time.Second)

	evs := c.outbox(t)
	stream.mu.Lock()
	checkJobLives(t, evs, stream.ids)
	t.Logf("%d jobs enqueued (%d enqueues refused while the server was down), %d events", len(stream.ids), stream.errs, len(evs))
	stream.mu.Unlock()
	eventually(t, 30*time.Second, "not every event in the stream", func() bool {
		return eventtest.StreamCount(ns.URL, "WINDFORCE") >= uint64(len(evs))
	})
	c.waitDelivered(t, "bus", len(evs), 10*time.Second)
	checkNATSStream(t, eventtest.ReadStream(t, ns.URL, "WINDFORCE"), evs)
}
