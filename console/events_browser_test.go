package console_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/windforce/windforce/events/relay"
	"github.com/windforce/windforce/internal/browsertest"
)

// receiver is a webhook endpoint that records the event ids it was sent.
type receiver struct {
	mu  sync.Mutex
	ids []string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	rc.mu.Lock()
	rc.ids = append(rc.ids, r.Header.Get("webhook-id"))
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// TestEventsInBrowser, in headless Chromium: an admin adds a webhook sink
// on the Events page and sees its secret once; the events of a job run
// then are delivered by the relay to the receiver, the sink's page lists
// the delivery as delivered, and the recent events list the job; a sync
// of a new commit pushed to the source's repository is delivered the same
// way as source.synced and listed with its commit.
func TestEventsInBrowser(t *testing.T) {
	t.Parallel()
	browsertest.Chromium(t)
	e := newSQLiteEnv(t)
	rc := &receiver{}
	hook := httptest.NewServer(rc)
	t.Cleanup(hook.Close)
	rs, ok := e.db.(relay.Store)
	if !ok {
		t.Fatalf("store %T is not a relay.Store", e.db)
	}
	rl := &relay.Relay{Store: rs, Poll: 50 * time.Millisecond}
	if err := rl.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rl.Stop)

	tb := browsertest.NewTab(t, e.url)
	tb.Open("/login")
	tb.Do(chromedp.WaitVisible(chromedp.CSS("#token")), chromedp.SendKeys(chromedp.CSS("#token"), adminToken),
		chromedp.Submit(chromedp.CSS("#token")))
	tb.WaitText(10*time.Second, "h1", "Runs")
	tb.Do(chromedp.Click(chromedp.CSS(`nav a[href="/w/ws/events"]`)))
	tb.WaitText(10*time.Second, "h1", "Events")
	tb.Do(chromedp.SetValue(chromedp.CSS("#k-url"), hook.URL+"/hooks"), chromedp.SetValue(chromedp.CSS("#k-id"), "hook"),
		chromedp.Click(chromedp.CSS("#sink-add")))
	tb.WaitText(10*time.Second, "#sink-secret", "shown only this once")
	if secret := tb.Text("#sink-secret-value"); !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret shown as %q", secret)
	}

	job := e.runAPI(`{"name":"Ada"}`)

	waitDelivered := func(what string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			tb.Open("/w/ws/events/sinks/hook?status=delivered")
			if strings.Contains(tb.Text("#main"), what) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no delivered delivery of %s listed:\n%s", what, tb.Text("#main"))
			}
			time.Sleep(100 * time.Millisecond) // polling the page with a deadline
		}
	}
	waitDelivered(job)
	row := tb.Text("#deliveries tbody")
	if !strings.Contains(row, "job.queued") || !strings.Contains(row, "delivered") {
		t.Fatalf("deliveries:\n%s", row)
	}
	rc.mu.Lock()
	got := len(rc.ids)
	rc.mu.Unlock()
	if got == 0 {
		t.Fatal("the receiver got nothing")
	}
	tb.Open("/w/ws/events")
	tb.WaitText(10*time.Second, "#recent-events", job)
	tb.WaitText(time.Second, "#sink-hook .delivered", "")

	e.repo.Write(t, map[string]string{"src/extra.ts": "export const x = 1;\n"})
	commit := e.repo.CommitPush(t, "extra")
	e.syncAPI()
	waitDelivered("source.synced")
	tb.Open("/w/ws/events")
	tb.WaitText(10*time.Second, "#recent-events", "at "+commit[:10])
	tb.Shot("console-events")
}

// runAPI enqueues hello/greet with input through the API and returns the
// job id.
func (e *env) runAPI(input string) string {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.t.Context(), "POST", e.url+"/api/w/ws/jobs/run/hello/greet", strings.NewReader(input))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct{ ID string }
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusCreated {
		e.t.Fatalf("run: %d %v", res.StatusCode, err)
	}
	return out.ID
}
