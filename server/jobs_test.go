package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/runner/wftoken"
	"github.com/windforce/windforce/spine"
)

// jobKeys are the job shape's fields of DESIGN §4.
var jobKeys = []string{"id", "workspace", "status", "app", "action", "commit_sha", "git_source_id", "entrypoint",
	"runtime", "tag", "priority", "trigger_kind", "attempt", "restarts", "worker", "input", "created_at",
	"scheduled_for", "started_at", "completed_at", "result", "error", "canceled_by", "canceled_reason"}

// TestJobEndpoints: the job shape, result 202/200, logs, cancel (409 once
// finished), reopen with the operator scope only, and 404s.
func TestJobEndpoints(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		id := e.call("POST", "/api/w/ws/jobs/run/hello/greet", adminToken, `{"name":"Ada"}`).want(201).obj()["id"].(string)
		job := e.call("GET", "/api/w/ws/jobs/"+id, adminToken, "").want(200).obj()
		for _, k := range jobKeys {
			if _, ok := job[k]; !ok {
				t.Fatalf("job lacks %q: %v", k, job)
			}
		}
		if job["app"] != "hello" || job["action"] != "greet" || job["commit_sha"] != e.sync1["commit"] ||
			job["git_source_id"] != "main" || job["runtime"] != "bun" || job["tag"] != "default" || job["workspace"] != "ws" {
			t.Fatalf("job pin %v", job)
		}
		if job["started_at"] != nil || job["result"] != nil || job["error"] != nil {
			t.Fatalf("queued job with times or outcome: %v", job)
		}
		if r := e.call("GET", "/api/w/ws/jobs/"+id+"/result", adminToken, "").want(202).obj(); r["status"] != "queued" {
			t.Fatalf("result of a queued job %v", r)
		}
		logs := e.call("GET", "/api/w/ws/jobs/"+id+"/logs", adminToken, "").want(200)
		if ct := logs.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") || len(logs.body) != 0 {
			t.Fatalf("logs %q as %s, want empty text", logs.body, ct)
		}
		e.call("POST", "/api/w/ws/jobs/"+id+"/cancel", adminToken, `{"reason":"`).wantError(400, "bad_request")
		c := e.call("POST", "/api/w/ws/jobs/"+id+"/cancel", adminToken, `{"reason":"not needed"}`).want(200).obj()
		if c["status"] != "canceled" {
			t.Fatalf("cancel of a waiting job answered %v", c)
		}
		e.call("POST", "/api/w/ws/jobs/"+id+"/cancel", adminToken, `{}`).wantError(409, "conflict")
		r := e.call("GET", "/api/w/ws/jobs/"+id+"/result", adminToken, "").want(200).obj()
		if r["status"] != "canceled" || r["error"] == nil {
			t.Fatalf("result of a canceled job %v", r)
		}
		job = e.call("GET", "/api/w/ws/jobs/"+id, adminToken, "").want(200).obj()
		if job["canceled_by"] != "token:admin" || job["canceled_by_label"] != "admin" || job["canceled_reason"] != "not needed" || job["completed_at"] == nil {
			t.Fatalf("canceled job %v", job)
		}
		// Reopen: operator only; a canceled job needs force.
		run := e.call("POST", "/api/tokens", adminToken, `{"workspace":"ws","scopes":["run","read","admin"]}`).want(201).obj()["token"].(string)
		op := e.call("POST", "/api/tokens", adminToken, `{"workspace":"ws","scopes":["operator"]}`).want(201).obj()["token"].(string)
		e.call("POST", "/api/w/ws/jobs/"+id+"/reopen", run, `{"force":true}`).wantError(403, "forbidden")
		e.call("POST", "/api/w/ws/jobs/"+id+"/reopen", op, `{}`).wantError(409, "conflict")
		if o := e.call("POST", "/api/w/ws/jobs/"+id+"/reopen", op, `{"force":true,"reason":"try again"}`).want(200).obj(); o["status"] != "queued" {
			t.Fatalf("reopen answered %v", o)
		}
		// Unknown or malformed ids, and another workspace's job, are 404.
		for _, p := range []string{"/api/w/ws/jobs/" + uuid.NewString(), "/api/w/ws/jobs/not-a-uuid", "/api/w/ws/jobs/" + uuid.NewString() + "/result",
			"/api/w/ws/jobs/" + uuid.NewString() + "/logs", "/api/w/other/jobs/" + id} {
			e.call("GET", p, adminToken, "").wantError(404, "not_found")
		}
		e.call("POST", "/api/w/ws/jobs/"+uuid.NewString()+"/cancel", adminToken, "").wantError(404, "not_found")
		e.call("GET", "/api/nothing", adminToken, "").wantError(404, "not_found")
	})
}

// TestRunWait: ?wait answers 200 with the result once a worker (here the
// test, through the store) completes the job.
func TestRunWait(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		wake, unsubscribe := e.db.Subscribe([]string{"default"})
		defer unsubscribe()
		type answer struct {
			status int
			body   string
			err    error
		}
		done := make(chan answer, 1)
		go func() {
			req, _ := http.NewRequestWithContext(t.Context(), "POST", e.url+"/api/w/ws/jobs/run/hello/greet?wait=30s", strings.NewReader(`{"name":"Ada"}`))
			req.Header.Set("Authorization", "Bearer "+adminToken)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- answer{err: err}
				return
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			done <- answer{res.StatusCode, string(b), err}
		}()
		var claimed []spine.ClaimedJob
		for len(claimed) == 0 {
			select {
			case <-wake:
			case <-t.Context().Done():
				t.Fatal("no wake-up")
			}
			var err error
			if claimed, err = e.db.Claim(t.Context(), spine.ClaimParams{Worker: "test", Tags: []string{"default"}, Limit: 1}); err != nil {
				t.Fatal(err)
			}
		}
		cj := claimed[0]
		if _, err := e.db.Complete(t.Context(), spine.CompleteParams{Lease: spine.Lease{JobID: cj.ID, ClaimToken: cj.ClaimToken},
			Result: json.RawMessage(`{"greeting":"Hello, Ada!"}`)}); err != nil {
			t.Fatal(err)
		}
		a := <-done
		if a.err != nil || a.status != 200 {
			t.Fatalf("wait answered %d %s (%v)", a.status, a.body, a.err)
		}
		var body map[string]any
		if err := json.Unmarshal([]byte(a.body), &body); err != nil {
			t.Fatal(err)
		}
		keys := make([]string, 0, len(body))
		for k := range body {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if strings.Join(keys, ",") != "id,result,status" || body["status"] != "success" || body["id"] != cj.ID.String() ||
			body["result"].(map[string]any)["greeting"] != "Hello, Ada!" {
			t.Fatalf("wait answered %v", body)
		}
	})
}

// TestJobToken: WF_TOKEN reads only its own job and enqueues children in
// its workspace, only while its claim is live.
func TestJobToken(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		parent := e.call("POST", "/api/w/ws/jobs/run/hello/greet", adminToken, `{"name":"P"}`).want(201).obj()["id"].(string)
		pid := uuid.MustParse(parent)
		mint := func(claim uuid.UUID) string {
			tok, err := wftoken.Mint(secret, wftoken.Claims{JobID: pid, Workspace: "ws", ClaimToken: claim, Expiry: time.Now().Add(time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			return tok
		}
		// Not claimed yet: the token names no live claim.
		e.call("GET", "/api/w/ws/jobs/"+parent, mint(uuid.New()), "").wantError(401, "unauthorized")
		claimed, err := e.db.Claim(t.Context(), spine.ClaimParams{Worker: "test", Tags: []string{"default"}, Limit: 1})
		if err != nil || len(claimed) != 1 || claimed[0].ID != pid {
			t.Fatalf("claim: %v %v", claimed, err)
		}
		tok := mint(claimed[0].ClaimToken)
		// A token of another claim of the same running job is refused.
		e.call("GET", "/api/w/ws/jobs/"+parent, mint(uuid.New()), "").wantError(401, "unauthorized")
		e.call("GET", "/api/w/ws/jobs/"+parent, tok, "").want(200)
		e.call("GET", "/api/w/ws/jobs/"+parent+"/result", tok, "").want(202)
		child := e.call("POST", "/api/w/ws/jobs/run/hello/greet", tok, `{"name":"C"}`).want(201).obj()["id"].(string)
		cj := e.call("GET", "/api/w/ws/jobs/"+child, adminToken, "").want(200).obj()
		if cj["trigger_kind"] != "child" || cj["trigger_ref"] != parent || cj["created_by"] != "job:"+parent {
			t.Fatalf("child job %v", cj)
		}
		e.call("GET", "/api/w/ws/jobs/"+child, tok, "").wantError(403, "forbidden")
		e.call("POST", "/api/w/ws/jobs/"+child+"/cancel", tok, "").wantError(403, "forbidden")
		e.call("GET", "/api/w/ws/apps", tok, "").wantError(403, "forbidden")
		e.call("POST", "/api/w/other/jobs/run/hello/greet", tok, `{"name":"C"}`).wantError(403, "forbidden")
		e.call("POST", "/api/tokens", tok, `{"workspace":"ws","scopes":["admin"]}`).wantError(403, "forbidden")
		if _, err := e.db.Complete(t.Context(), spine.CompleteParams{Lease: spine.Lease{JobID: pid, ClaimToken: claimed[0].ClaimToken}, Result: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
		e.call("GET", "/api/w/ws/jobs/"+parent, tok, "").wantError(401, "unauthorized")
		e.call("POST", "/api/w/ws/jobs/run/hello/greet", tok, `{"name":"C"}`).wantError(401, "unauthorized")
	})
}
