package relay_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/internal/eventtest"
	"github.com/windforce/windforce/store"
)

// receiver is a webhook endpoint that checks what the relay sends by
// itself: the Standard Webhooks signature (eventtest's implementation of
// the spec, not the relay's Sign), the CloudEvent, and the order of each
// subject's events. While failing it answers 500.
type receiver struct {
	t      *testing.T
	secret string

	mu       sync.Mutex
	failing  bool
	requests int
	refused  int
	// accepted counts the 2xx answers per event id; next is, per
	// subject, the n of the event due next.
	accepted map[string]int
	next     map[string]int
	problems []string
}

func newReceiver(t *testing.T, secret string) (*receiver, *httptest.Server) {
	rc := &receiver{t: t, secret: secret, accepted: map[string]int{}, next: map[string]int{}}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	return rc, srv
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.requests++
	if err := eventtest.VerifyWebhook(rc.secret, r.Header, body); err != nil {
		rc.problems = append(rc.problems, "signature: "+err.Error())
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var ce struct {
		SpecVersion, ID, Source, Type, Subject, Time, DataContentType string
		Data                                                          struct{ N int }
	}
	if err := json.Unmarshal(body, &ce); err != nil || ce.SpecVersion != "1.0" || ce.ID != r.Header.Get("webhook-id") ||
		!strings.HasPrefix(ce.Type, "windforce.") || ce.Source != "windforce/ws" || ce.Subject == "" ||
		r.Header.Get("Content-Type") != "application/cloudevents+json" {
		rc.problems = append(rc.problems, fmt.Sprintf("not the CloudEvent expected: %s (%v)", body, err))
		http.Error(w, "bad event", http.StatusBadRequest)
		return
	}
	if rc.accepted[ce.ID] == 0 && ce.Data.N != rc.next[ce.Subject] {
		rc.problems = append(rc.problems, fmt.Sprintf("%s: event #%d sent while #%d was not delivered", ce.Subject, ce.Data.N, rc.next[ce.Subject]))
	}
	if rc.failing {
		rc.refused++
		http.Error(w, "receiver is down", http.StatusInternalServerError)
		return
	}
	if rc.accepted[ce.ID] == 0 && ce.Data.N == rc.next[ce.Subject] {
		rc.next[ce.Subject]++
	}
	rc.accepted[ce.ID]++
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) setFailing(f bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.failing = f
}

// delivered counts the events accepted at least once.
func (rc *receiver) delivered() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.accepted)
}

// TestWebhookReceiverDownThenUp: a stream of jobs' events while the
// receiver answers 500, then 200: every event is delivered, each once
// (two relays share the work on Postgres), each job's in order, every
// request signed so that an independent Standard Webhooks check passes;
// the deliveries show their attempts and last error; on both databases.
func TestWebhookReceiverDownThenUp(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d db) {
		s := d.open(t)
		ctx := t.Context()
		rc, srv := newReceiver(t, "")
		sk, err := s.CreateSink(ctx, sink.Sink{Workspace: "ws", ID: "hook", Kind: sink.KindWebhook, URL: srv.URL + "/in"})
		if err != nil {
			t.Fatal(err)
		}
		rc.secret = sk.Secret
		startRelay(t, s, 2*time.Second)
		if d.name == "postgres" {
			startRelay(t, d.open(t), 2*time.Second)
		}
		rc.setFailing(true)
		const jobs = 12
		var all []event
		for n, typ := range jobLife {
			for j := range jobs {
				all = append(all, putEvent(t, s, "ws", typ, fmt.Sprintf("job-%02d", j), n))
			}
			if n == 1 {
				time.Sleep(300 * time.Millisecond) // a stream over time, not one batch
			}
		}
		eventually(t, 20*time.Second, "the receiver got no request while down", func() bool {
			rc.mu.Lock()
			defer rc.mu.Unlock()
			return rc.refused >= jobs
		})
		time.Sleep(2 * time.Second) // stay down past a few backoffs
		rc.setFailing(false)
		eventually(t, 30*time.Second, "not every event delivered", func() bool { return rc.delivered() == len(all) })

		rc.mu.Lock()
		problems, accepted := rc.problems, rc.accepted
		rc.mu.Unlock()
		for _, p := range problems {
			t.Error(p)
		}
		for _, ev := range all {
			if accepted[ev.id.String()] != 1 {
				t.Errorf("event %d (%s of %s) accepted %d times", ev.seq, ev.typ, ev.subject, accepted[ev.id.String()])
			}
		}
		waitSettled(t, s, "hook", len(all))
		ds, err := s.ListDeliveries(ctx, "ws", "hook", sink.DeliveryFilter{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		retried := 0
		for _, dl := range ds {
			if dl.Attempts > 1 {
				retried++
				if !strings.Contains(dl.LastError, "500") {
					t.Errorf("delivery %d after %d attempts: last error %q", dl.EventSeq, dl.Attempts, dl.LastError)
				}
			}
		}
		if retried < jobs {
			t.Errorf("%d deliveries retried, want at least the %d first events", retried, jobs)
		}
	})
}

// waitSettled waits until all n deliveries of the sink are delivered
// (counted, not listed: a stream of jobs can pass a list page's 1000).
func waitSettled(t *testing.T, s *store.Store, id string, n int) {
	t.Helper()
	eventually(t, 30*time.Second, "deliveries not all delivered", func() bool {
		counts, err := s.DeliveryCounts(t.Context(), "ws", id)
		return err == nil && counts[sink.StatusDelivered] == n
	})
}

// TestDeadReceiverSlowsNoOtherSink: a receiver that holds every request
// open fills its own sink's send slots only: another sink of the
// workspace gets every event meanwhile; on both databases.
func TestDeadReceiverSlowsNoOtherSink(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d db) {
		s := d.open(t)
		hold := make(chan struct{})
		dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(dead.Close)
		t.Cleanup(func() { close(hold) })
		rc, live := newReceiver(t, "")
		if _, err := s.CreateSink(t.Context(), sink.Sink{Workspace: "ws", ID: "dead", Kind: sink.KindWebhook, URL: dead.URL}); err != nil {
			t.Fatal(err)
		}
		sk, err := s.CreateSink(t.Context(), sink.Sink{Workspace: "ws", ID: "live", Kind: sink.KindWebhook, URL: live.URL})
		if err != nil {
			t.Fatal(err)
		}
		rc.secret = sk.Secret
		startRelay(t, s, 30*time.Second)
		const jobs = 40
		for j := range jobs {
			for n, typ := range jobLife[:2] {
				putEvent(t, s, "ws", typ, fmt.Sprintf("job-%02d", j), n)
			}
		}
		eventually(t, 20*time.Second, "the live sink waits behind the dead one", func() bool { return rc.delivered() == 2*jobs })
		ds, err := s.ListDeliveries(t.Context(), "ws", "dead", sink.DeliveryFilter{Status: sink.StatusDelivered})
		if err != nil || len(ds) != 0 {
			t.Fatalf("the dead sink has %d delivered, %v", len(ds), err)
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		for _, p := range rc.problems {
			t.Error(p)
		}
	})
}
