package server_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/metrics/metricstest"
	"github.com/windforce/windforce/server"
	"github.com/windforce/windforce/spine"
)

// fakeClock is the server's clock in webhook tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// withClock serves a second API over e's store whose clock is clock.
func (e *env) withClock(t *testing.T, clock *fakeClock) *env {
	t.Helper()
	return e.second(t, func(c *server.Config) { c.Clock = clock.Now })
}

// sign is the hex HMAC-SHA256 of ts + "." + body under secret.
func sign(secret, ts, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "." + body))
	return hex.EncodeToString(mac.Sum(nil))
}

// signed posts body to path with the signature and timestamp headers.
func (e *env) signed(path, body, sig, ts string) *resp {
	e.t.Helper()
	return e.call("POST", path, "", body, "X-Windforce-Signature", sig, "X-Windforce-Timestamp", ts)
}

const greetHook = "/api/w/ws/webhooks/hello/greet"

// newSecret creates (or rotates) greet's webhook secret.
func (e *env) newSecret(t *testing.T) string {
	t.Helper()
	v := e.call("POST", greetHook+"/secret", adminToken, "").want(http.StatusCreated).obj()
	s, _ := v["secret"].(string)
	if len(v) != 1 || !strings.HasPrefix(s, "whsec_") || len(s) < 40 {
		t.Fatalf("secret answer %v, want {\"secret\":\"whsec_…\"}", v)
	}
	return s
}

// TestWebhookSigned: a valid signature enqueues a webhook job; a replay is
// 409; the sender may prefix "sha256=" and spell hex in any case.
func TestWebhookSigned(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		clock := &fakeClock{now: time.Unix(1_900_000_000, 0)}
		e = e.withClock(t, clock)
		key := e.newSecret(t)
		ts := strconv.FormatInt(clock.Now().Unix(), 10)
		body := `{"name":"Ada"}`
		sig := sign(key, ts, body)
		id := e.signed(greetHook, body, sig, ts).want(http.StatusCreated).obj()["id"].(string)
		job := e.call("GET", "/api/w/ws/jobs/"+id, adminToken, "").want(http.StatusOK).obj()
		if job["trigger_kind"] != "webhook" || job["trigger_ref"] != "hmac" || job["app"] != "hello" || job["action"] != "greet" {
			t.Fatalf("job %v, want trigger webhook/hmac of hello/greet", job)
		}
		if in := job["input"].(map[string]any); in["name"] != "Ada" {
			t.Fatalf("job input %v", in)
		}

		// The same request again, however the signature is spelled, is a replay.
		before := e.jobCount()
		e.signed(greetHook, body, sig, ts).wantError(http.StatusConflict, "conflict")
		e.signed(greetHook, body, "sha256="+strings.ToUpper(sig), ts).wantError(http.StatusConflict, "conflict")
		if n := e.jobCount(); n != before {
			t.Fatalf("%d jobs after replays, want %d", n, before)
		}

		// A new timestamp is a new request; the sha256= prefix is accepted;
		// a timestamp inside the window either way passes.
		clock.advance(time.Second)
		ts2 := strconv.FormatInt(clock.Now().Unix(), 10)
		e.signed(greetHook, body, "sha256="+sign(key, ts2, body), ts2).want(http.StatusCreated)
		ts3 := strconv.FormatInt(clock.Now().Add(4*time.Minute).Unix(), 10)
		e.signed(greetHook, body, sign(key, ts3, body), ts3).want(http.StatusCreated)
		ts4 := strconv.FormatInt(clock.Now().Add(-4*time.Minute).Unix(), 10)
		e.signed(greetHook, `{"name":"Bo"}`, sign(key, ts4, `{"name":"Bo"}`), ts4).want(http.StatusCreated)
		if n := e.jobCount(); n != before+3 {
			t.Fatalf("%d jobs, want %d", n, before+3)
		}
	})
}

// TestWebhookRefused: every refused webhook answers its status and
// creates no job; a refused enqueue does not burn the signature.
func TestWebhookRefused(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		clock := &fakeClock{now: time.Unix(1_900_000_000, 0)}
		e = e.withClock(t, clock)
		key := e.newSecret(t)
		ts := strconv.FormatInt(clock.Now().Unix(), 10)
		body := `{"name":"Ada"}`
		good := sign(key, ts, body)
		stale := strconv.FormatInt(clock.Now().Add(-6*time.Minute).Unix(), 10)
		future := strconv.FormatInt(clock.Now().Add(6*time.Minute).Unix(), 10)
		bad := func(b string) string { return sign(key, ts, b) }
		cases := []struct {
			name, path, body, sig, ts string
			status                    int
			code                      string
		}{
			{"no signature", greetHook, body, "", ts, 401, "unauthorized"},
			{"no timestamp", greetHook, body, good, "", 401, "unauthorized"},
			{"tampered body", greetHook, `{"name":"Eve"}`, good, ts, 401, "unauthorized"},
			{"tampered timestamp", greetHook, body, good, strconv.FormatInt(clock.Now().Unix()+1, 10), 401, "unauthorized"},
			{"wrong key", greetHook, body, sign("whsec_other", ts, body), ts, 401, "unauthorized"},
			{"not hex", greetHook, body, "zz" + good[2:], ts, 401, "unauthorized"},
			{"truncated", greetHook, body, good[:32], ts, 401, "unauthorized"},
			{"stale", greetHook, body, sign(key, stale, body), stale, 401, "unauthorized"},
			{"future", greetHook, body, sign(key, future, body), future, 401, "unauthorized"},
			{"timestamp not a number", greetHook, body, sign(key, "soon", body), "soon", 401, "unauthorized"},
			{"no secret for action", "/api/w/ws/webhooks/hello/sleep", body, good, ts, 401, "unauthorized"},
			{"unknown app", "/api/w/ws/webhooks/nope/greet", body, good, ts, 401, "unauthorized"},
			{"other workspace", "/api/w/other/webhooks/hello/greet", body, good, ts, 401, "unauthorized"},
			{"bad JSON", greetHook, `{"name":`, bad(`{"name":`), ts, 400, "bad_request"},
			{"NUL", greetHook, `{"name":"a\u0000"}`, bad(`{"name":"a\u0000"}`), ts, 400, "bad_request"},
			{"over the limit", greetHook, `{"name":"` + strings.Repeat("a", maxInput) + `"}`, good, ts, 413, "payload_too_large"},
			{"schema mismatch", greetHook, `{"name":1}`, bad(`{"name":1}`), ts, 422, "invalid_input"},
		}
		for _, c := range cases {
			before := e.jobCount()
			r := e.call("POST", c.path, "", c.body, "X-Windforce-Signature", c.sig, "X-Windforce-Timestamp", c.ts)
			if r.status != c.status {
				t.Fatalf("%s: status %d, want %d; body %s", c.name, r.status, c.status, r.body)
			}
			r.wantError(c.status, c.code)
			if n := e.jobCount(); n != before {
				t.Fatalf("%s: %d jobs after the refusal, want %d", c.name, n, before)
			}
		}

		// A refused enqueue recorded nothing: the same signed request is
		// refused for its input again, not as a replay.
		e.signed(greetHook, `{"name":1}`, bad(`{"name":1}`), ts).wantError(422, "invalid_input")
		// The good request was never accepted above, so it still works once.
		e.signed(greetHook, body, good, ts).want(http.StatusCreated)

		// Time passes: the same request is now stale (401, not a replay).
		clock.advance(5*time.Minute + time.Second)
		e.signed(greetHook, body, good, ts).wantError(401, "unauthorized")

		// Rotation: the old secret stops working at once.
		key2 := e.newSecret(t)
		ts = strconv.FormatInt(clock.Now().Unix(), 10)
		e.signed(greetHook, body, sign(key, ts, body), ts).wantError(401, "unauthorized")
		e.signed(greetHook, body, sign(key2, ts, body), ts).want(http.StatusCreated)
	})
}

// TestWebhookToken: a webhook-scoped token enqueues on the webhook route
// and nowhere else; run and admin tokens are accepted there too.
func TestWebhookToken(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		tok := e.call("POST", "/api/tokens", adminToken, `{"workspace":"ws","scopes":["webhook"],"label":"github"}`).want(http.StatusCreated).obj()
		hook, hookID := tok["token"].(string), tok["id"].(string)
		run := e.call("POST", "/api/tokens", adminToken, `{"workspace":"ws","scopes":["run"]}`).want(http.StatusCreated).obj()["token"].(string)
		read := e.call("POST", "/api/tokens", adminToken, `{"workspace":"ws","scopes":["read"]}`).want(http.StatusCreated).obj()["token"].(string)
		other := e.call("POST", "/api/tokens", adminToken, `{"workspace":"other","scopes":["webhook"]}`).want(http.StatusCreated).obj()["token"].(string)

		id := e.call("POST", greetHook, hook, `{"name":"Ada"}`).want(http.StatusCreated).obj()["id"].(string)
		job := e.call("GET", "/api/w/ws/jobs/"+id, adminToken, "").want(http.StatusOK).obj()
		if job["trigger_kind"] != "webhook" || job["trigger_ref"] != hookID {
			t.Fatalf("job %v, want trigger webhook with the token id %s", job, hookID)
		}
		e.call("POST", greetHook, run, `{"name":"Ada"}`).want(http.StatusCreated)
		e.call("POST", greetHook, adminToken, `{"name":"Ada"}`).want(http.StatusCreated)

		before := e.jobCount()
		e.call("POST", "/api/w/ws/jobs/run/hello/greet", hook, `{"name":"Ada"}`).wantError(403, "forbidden")
		e.call("GET", "/api/w/ws/jobs/"+id, hook, "").wantError(403, "forbidden")
		e.call("GET", "/api/w/ws/apps", hook, "").wantError(403, "forbidden")
		e.call("POST", greetHook+"/secret", hook, "").wantError(403, "forbidden")
		e.call("POST", greetHook, read, `{"name":"Ada"}`).wantError(403, "forbidden")
		e.call("POST", greetHook, other, `{"name":"Ada"}`).wantError(403, "forbidden")
		e.call("POST", greetHook, "wft_nope", `{"name":"Ada"}`).wantError(401, "unauthorized")
		e.call("POST", greetHook, hook, `{"name":1}`).wantError(422, "invalid_input")
		e.call("POST", greetHook, hook, `{"name":`).wantError(400, "bad_request")
		e.call("POST", "/api/w/ws/webhooks/hello/nope", hook, `{}`).wantError(404, "not_found")
		if n := e.jobCount(); n != before {
			t.Fatalf("%d jobs after refusals, want %d", n, before)
		}
	})
}

// TestWebhookSecretRoute: admin only; 404 for an unknown app or action.
func TestWebhookSecretRoute(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		run := e.call("POST", "/api/tokens", adminToken, `{"workspace":"ws","scopes":["run"]}`).want(http.StatusCreated).obj()["token"].(string)
		e.call("POST", greetHook+"/secret", run, "").wantError(403, "forbidden")
		e.call("POST", greetHook+"/secret", "", "").wantError(401, "unauthorized")
		e.call("POST", "/api/w/ws/webhooks/nope/greet/secret", adminToken, "").wantError(404, "not_found")
		e.call("POST", "/api/w/ws/webhooks/hello/nope/secret", adminToken, "").wantError(404, "not_found")
		if a, b := e.newSecret(t), e.newSecret(t); a == b {
			t.Fatal("rotation answered the same secret")
		}
	})
}

// TestWebhookSeenForgotten: the store refuses a recorded signature and
// forgets it once it is older than forgetBefore.
func TestWebhookSeenForgotten(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		t0 := time.Now().Truncate(time.Second)
		sig := strings.Repeat("ab", 32)
		req := catalog.EnqueueRequest{Workspace: ws, App: "hello", Action: "greet", TriggerKind: spine.TriggerWebhook,
			TriggerRef: "hmac", CreatedBy: "webhook", Input: []byte(`{"name":"Ada"}`)}
		if _, err := e.db.EnqueueWebhook(t.Context(), sig, t0, t0.Add(-10*time.Minute), req); err != nil {
			t.Fatal(err)
		}
		_, err := e.db.EnqueueWebhook(t.Context(), sig, t0.Add(time.Minute), t0.Add(-9*time.Minute), req)
		if !strings.Contains(errString(err), "conflict") {
			t.Fatalf("replay: %v, want a conflict", err)
		}
		if _, err := e.db.EnqueueWebhook(t.Context(), sig, t0.Add(11*time.Minute), t0.Add(time.Minute), req); err != nil {
			t.Fatalf("after the window: %v, want the old record forgotten", err)
		}
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestMetricsEndpoint: GET /metrics needs no token and shows the queue as
// the database holds it and the jobs this server enqueued, by trigger.
func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		firstURL := e.url
		clock := &fakeClock{now: time.Now()}
		e = e.withClock(t, clock)
		key := e.newSecret(t)
		ts := strconv.FormatInt(clock.Now().Unix(), 10)
		e.signed(greetHook, `{"name":"Ada"}`, sign(key, ts, `{"name":"Ada"}`), ts).want(http.StatusCreated)
		e.call("POST", greetHook, adminToken, `{"name":"Bo"}`).want(http.StatusCreated)
		e.call("POST", "/api/w/ws/jobs/run/hello/greet", adminToken, `{"name":"Cy"}`).want(http.StatusCreated)
		at := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		e.call("POST", "/api/w/ws/jobs/run/hello/greet?scheduled_for="+at, adminToken, `{"name":"Di"}`).want(http.StatusCreated)
		e.signed(greetHook, `{"name":"Ada"}`, sign(key, ts, `{"name":"Ada"}`), ts).want(http.StatusConflict)

		m := metricstest.Get(t, e.url+"/metrics")
		m.Want(t, 3, "windforce_queue_waiting", "workspace", "ws", "tag", "default")
		m.Want(t, 1, "windforce_queue_scheduled", "workspace", "ws", "tag", "default")
		m.Want(t, 0, "windforce_queue_running", "workspace", "ws", "tag", "default")
		m.Want(t, 2, "windforce_jobs_enqueued_total", "trigger", "webhook", "workspace", "ws")
		m.Want(t, 2, "windforce_jobs_enqueued_total", "trigger", "api", "workspace", "ws")

		// The first server shares the database: same queue, its own counters.
		first := metricstest.Get(t, firstURL+"/metrics")
		first.Want(t, 3, "windforce_queue_waiting", "workspace", "ws", "tag", "default")
		if _, ok := first["windforce_jobs_enqueued_total"]; ok {
			t.Fatal("the first server counted enqueues it did not make")
		}
	})
}
