package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/internal/eventtest"
)

// hookReceiver is a webhook endpoint of the test's own. While holding,
// it takes each request in and never answers (the sender sits between
// the commit of the change and a completed publish); otherwise it answers
// 204. It records every request, verified with eventtest's independent
// Standard Webhooks check.
type hookReceiver struct {
	secret string
	gone   chan struct{} // closed at cleanup: held requests end unanswered

	mu       sync.Mutex
	holding  bool
	inHand   int // requests held open right now
	reqs     []hookRequest
	problems []string
}

// hookRequest is one request the receiver got.
type hookRequest struct {
	id, subject string
	accepted    bool // answered 2xx
}

func newHookReceiver(t *testing.T) (*hookReceiver, *httptest.Server) {
	rc := &hookReceiver{holding: true, gone: make(chan struct{})}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(rc.gone) }) // before srv.Close (LIFO)
	return rc, srv
}

func (rc *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var ce cloudEvent
	rc.mu.Lock()
	if err := eventtest.VerifyWebhook(rc.secret, r.Header, body); err != nil {
		rc.problems = append(rc.problems, "signature: "+err.Error())
	}
	if err := json.Unmarshal(body, &ce); err != nil || ce.SpecVersion != "1.0" || ce.ID != r.Header.Get("webhook-id") ||
		ce.Source != "windforce/ws" || ce.Subject == "" || r.Header.Get("Content-Type") != "application/cloudevents+json" {
		rc.problems = append(rc.problems, fmt.Sprintf("not the CloudEvent expected: %s (%v)", body, err))
	}
	req := hookRequest{id: ce.ID, subject: ce.Subject, accepted: !rc.holding}
	rc.reqs = append(rc.reqs, req)
	if !rc.holding {
		rc.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		return
	}
	rc.inHand++
	rc.mu.Unlock()
	select { // held: no answer, ever
	case <-r.Context().Done():
	case <-rc.gone:
	}
	rc.mu.Lock()
	rc.inHand--
	rc.mu.Unlock()
	panic(http.ErrAbortHandler) // ends the connection without an answer
}

// held is how many requests the receiver holds open now.
func (rc *hookReceiver) held() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.inHand
}

func (rc *hookReceiver) answer() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.holding = false
}

// accepted is the ids answered 2xx, with how many times each was.
func (rc *hookReceiver) accepted() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[string]int{}
	for _, r := range rc.reqs {
		if r.accepted {
			out[r.id]++
		}
	}
	return out
}

// checkOrder fails unless, per job, every request carried the job's
// oldest event not yet accepted (or repeated an accepted one): a later
// event of a job is never sent before the earlier ones are delivered.
func (rc *hookReceiver) checkOrder(t *testing.T, evs []events.Event) {
	t.Helper()
	pos := map[string]int{} // event id: its place among its job's events
	n := map[string]int{}
	for _, ev := range evs {
		pos[ev.ID.String()] = n[ev.Subject]
		n[ev.Subject]++
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	done := map[string]int{} // per job, how many of its events were accepted
	for i, r := range rc.reqs {
		p, ok := pos[r.id]
		switch {
		case !ok:
			t.Errorf("request %d: event %s is not in the outbox", i, r.id)
		case p > done[r.subject]:
			t.Errorf("request %d: job %s's event #%d sent before #%d was delivered", i, r.subject, p, done[r.subject])
		case p == done[r.subject] && r.accepted:
			done[r.subject]++
		}
	}
}

// TestWebhookServerSIGKILLedBetweenCommitAndPublish is issue 17's test
// with the real binary: `windforce server` and `windforce worker` on a
// fresh Postgres, real jobs of examples/hello, a webhook sink whose
// receiver takes the first deliveries in and never answers. With a
// request in hand the server is SIGKILLed; the jobs finish meanwhile
// (the worker writes to the database). Their events are committed and
// none delivered. The receiver then answers 204, the server restarts on
// the same database: every event of every job (queued, started,
// succeeded) is delivered, each at least once, in order per job, signed
// (an independent Standard Webhooks check), and the deliveries say
// delivered.
func TestWebhookServerSIGKILLedBetweenCommitAndPublish(t *testing.T) {
	t.Parallel()
	c := startEventsCluster(t)
	rc, srv := newHookReceiver(t)
	secret := c.addSink(t, `{"id":"hook","kind":"webhook","url":"`+srv.URL+`/in"}`)
	rc.mu.Lock()
	rc.secret = secret
	rc.mu.Unlock()

	var jobs []string
	for i := range 4 {
		jobs = append(jobs, c.enqueue(t, fmt.Sprintf("job-%d", i)))
	}
	eventually(t, 20*time.Second, "the receiver has no request in hand", func() bool { return rc.held() > 0 })
	c.killServer(t)
	killedAt := time.Now()

	c.waitJobsDone(t, 30*time.Second) // the worker runs them with the server dead
	evs := c.outbox(t)
	checkJobLives(t, evs, jobs)
	if len(rc.accepted()) != 0 {
		t.Fatalf("the receiver accepted %v before the kill", rc.accepted())
	}
	ds, err := c.db.ListDeliveries(t.Context(), "ws", "hook", sink.DeliveryFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	sent := 0
	for _, d := range ds {
		if d.Status != sink.StatusPending {
			t.Errorf("after the kill, delivery %d (%s) is %s", d.EventSeq, d.EventType, d.Status)
		}
		if d.Attempts > 0 {
			sent++
		}
	}
	if sent == 0 {
		t.Fatalf("after the kill, no delivery of %d was being sent: %+v", len(ds), ds)
	}
	t.Logf("killed with %d of %d deliveries in flight, %d events in the outbox", sent, len(ds), len(evs))

	rc.answer()
	c.restartServer(t)
	restarted := time.Now()
	eventually(t, 30*time.Second, "not every event accepted after the restart", func() bool {
		return len(rc.accepted()) == len(evs)
	})
	t.Logf("all %d events accepted %s after the restart, %s after the kill (a dead server's lease lasts %s)",
		len(evs), time.Since(restarted).Round(100*time.Millisecond), time.Since(killedAt).Round(100*time.Millisecond),
		eventsRelayTimeout+5*time.Second)
	c.waitDelivered(t, "hook", len(evs), 10*time.Second)
	accepted := rc.accepted()
	for _, ev := range evs {
		if accepted[ev.ID.String()] == 0 {
			t.Errorf("event %d (%s of %s) never accepted", ev.Seq, ev.Type, ev.Subject)
		}
	}
	rc.checkOrder(t, evs)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, p := range rc.problems {
		t.Error(p)
	}
}
