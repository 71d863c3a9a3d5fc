package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestRunRefused: every refusal of POST run answers its status and the
// error body, and writes no row.
func TestRunRefused(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		run := e.call("POST", "/api/tokens", adminToken, `{"workspace":"ws","scopes":["run"],"label":"runner"}`).want(http.StatusCreated).obj()["token"].(string)
		readOnly := e.call("POST", "/api/tokens", adminToken, `{"workspace":"ws","scopes":["read"]}`).want(http.StatusCreated).obj()["token"].(string)
		other := e.call("POST", "/api/tokens", adminToken, `{"workspace":"other","scopes":["run"]}`).want(http.StatusCreated).obj()["token"].(string)
		greet := "/api/w/ws/jobs/run/hello/greet"
		cases := []struct {
			name, path, token, body string
			status                  int
			code                    string
		}{
			{"bad JSON", greet, run, `{"name":`, 400, "bad_request"},
			{"two values", greet, run, `{} {}`, 400, "bad_request"},
			{"escaped NUL", greet, run, `{"name":"a\u0000b"}`, 400, "bad_request"},
			{"NUL in key", greet, run, `{"na\u0000me":"x"}`, 400, "bad_request"},
			{"invalid UTF-8", greet, run, "{\"name\":\"\xff\xfe\"}", 400, "bad_request"},
			{"bad priority", greet + "?priority=high", run, `{"name":"Ada"}`, 400, "bad_request"},
			{"bad wait", greet + "?wait=soon", run, `{"name":"Ada"}`, 400, "bad_request"},
			{"bad scheduled_for", greet + "?scheduled_for=tomorrow", run, `{"name":"Ada"}`, 400, "bad_request"},
			{"no token", greet, "", `{"name":"Ada"}`, 401, "unauthorized"},
			{"unknown token", greet, "wft_nope", `{"name":"Ada"}`, 401, "unauthorized"},
			{"forged job token", greet, "wf1.e30.AAAA", `{"name":"Ada"}`, 401, "unauthorized"},
			{"read scope", greet, readOnly, `{"name":"Ada"}`, 403, "forbidden"},
			{"other workspace", greet, other, `{"name":"Ada"}`, 403, "forbidden"},
			{"unknown app", "/api/w/ws/jobs/run/nope/greet", run, `{}`, 404, "not_found"},
			{"unknown action", "/api/w/ws/jobs/run/hello/nope", run, `{}`, 404, "not_found"},
			{"unknown workspace", "/api/w/nows/jobs/run/hello/greet", adminToken, `{"name":"Ada"}`, 404, "not_found"},
			{"over the limit", greet, run, `{"name":"` + strings.Repeat("a", maxInput) + `"}`, 413, "payload_too_large"},
			{"schema mismatch", greet, run, `{"name":1}`, 422, "invalid_input"},
		}
		for _, c := range cases {
			before := e.jobCount()
			details := e.call("POST", c.path, c.token, c.body).wantError(c.status, c.code)
			if n := e.jobCount(); n != before {
				t.Fatalf("%s: %d jobs after the refusal, want %d", c.name, n, before)
			}
			if c.status == 422 {
				fields := details["fields"].([]any)
				if len(fields) == 0 || fields[0].(map[string]any)["pointer"] != "/name" {
					t.Fatalf("%s: details %v, want a field at /name", c.name, details)
				}
			}
		}
		// A chunked body of unknown length is cut at the limit too.
		before := e.jobCount()
		body := strings.NewReader(`{"name":"` + strings.Repeat("a", 2*maxInput) + `"}`)
		e.send("POST", greet, run, body, -1).wantError(413, "payload_too_large")
		// A missing required field is 422 with the root pointer.
		d := e.call("POST", greet, run, `{}`).wantError(422, "invalid_input")
		if len(d["fields"].([]any)) == 0 {
			t.Fatalf("details %v, want fields", d)
		}
		if n := e.jobCount(); n != before {
			t.Fatalf("%d jobs after refusals, want %d", n, before)
		}
	})
}

// TestRunEnqueues: a good request answers 201 {"id"} and records the
// trigger kind (api, or cli with the header) and the token's id as
// created_by, its label beside it.
func TestRunEnqueues(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		minted := e.call("POST", "/api/tokens", adminToken, `{"workspace":"ws","scopes":["run","read"],"label":"ci-bot"}`).want(http.StatusCreated).obj()
		run, by := minted["token"].(string), "token:"+minted["id"].(string)
		res := e.call("POST", "/api/w/ws/jobs/run/hello/greet?priority=7", run, `{"name":"Ada"}`).want(http.StatusCreated).obj()
		if len(res) != 1 || res["id"] == "" {
			t.Fatalf("run answered %v, want {\"id\"}", res)
		}
		job := e.call("GET", "/api/w/ws/jobs/"+res["id"].(string), run, "").want(http.StatusOK).obj()
		if job["trigger_kind"] != "api" || job["created_by"] != by || job["created_by_label"] != "ci-bot" || job["status"] != "queued" || job["priority"].(interface{ String() string }).String() != "7" {
			t.Fatalf("job %v: want api trigger by %s (ci-bot), queued, priority 7", job, by)
		}
		cli := e.call("POST", "/api/w/ws/jobs/run/hello/greet", run, `{"name":"Bob"}`, "X-Windforce-Trigger", "cli").want(http.StatusCreated).obj()
		job = e.call("GET", "/api/w/ws/jobs/"+cli["id"].(string), run, "").want(http.StatusOK).obj()
		if job["trigger_kind"] != "cli" {
			t.Fatalf("trigger_kind %v, want cli", job["trigger_kind"])
		}
		// ?scheduled_for is pinned; ?wait on a job nobody runs ends in 202.
		sched := e.call("POST", "/api/w/ws/jobs/run/hello/greet?scheduled_for=2099-01-01T00:00:00Z", run, `{"name":"Cy"}`).want(http.StatusCreated).obj()
		job = e.call("GET", "/api/w/ws/jobs/"+sched["id"].(string), run, "").want(http.StatusOK).obj()
		if !strings.HasPrefix(job["scheduled_for"].(string), "2099-01-01T00:00:00") {
			t.Fatalf("scheduled_for %v", job["scheduled_for"])
		}
		w := e.call("POST", "/api/w/ws/jobs/run/hello/greet?wait=50ms", run, `{"name":"Dee"}`).want(http.StatusAccepted).obj()
		if len(w) != 2 || w["status"] != "queued" || w["id"] == "" {
			t.Fatalf("wait answered %v, want {id, status: queued}", w)
		}
		// Coalescing folds a second request into the waiting job.
		a := e.call("POST", "/api/w/ws/jobs/run/hello/greet?coalesce_key=k", run, `{"name":"A"}`).want(http.StatusCreated).obj()
		b := e.call("POST", "/api/w/ws/jobs/run/hello/greet?coalesce_key=k", run, `{"name":"B"}`).want(http.StatusCreated).obj()
		if a["id"] != b["id"] {
			t.Fatalf("coalesced ids %v and %v differ", a["id"], b["id"])
		}
		job = e.call("GET", "/api/w/ws/jobs/"+a["id"].(string), run, "").want(http.StatusOK).obj()
		if in := job["input"].(map[string]any); in["name"] != "B" {
			t.Fatalf("coalesced input %v, want the latest", in)
		}
	})
}
