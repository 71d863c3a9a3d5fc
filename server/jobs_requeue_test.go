package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/windforce/windforce/internal/gittest"
	"github.com/windforce/windforce/spine"
)

// bulk is the decoded answer of POST …/jobs/requeue.
type bulk struct {
	Requeued []struct{ From, To string } `json:"requeued"`
	Skipped  []struct {
		ID, Code, Reason string
	} `json:"skipped"`
	NextCursor *string `json:"next_cursor"`
}

// requeueJobs posts body to the bulk requeue and decodes its 200.
func (e *env) requeueJobs(body string) bulk {
	e.t.Helper()
	r := e.call("POST", "/api/w/ws/jobs/requeue", adminToken, body).want(http.StatusOK)
	var b bulk
	if err := json.Unmarshal(r.body, &b); err != nil || b.Requeued == nil || b.Skipped == nil {
		e.t.Fatalf("bulk requeue answered %s: %v (want both lists, empty or not)", r.body, err)
	}
	return b
}

// run enqueues hello/action with input and returns the job's id.
func (e *env) run(action, input string) string {
	e.t.Helper()
	return e.call("POST", "/api/w/ws/jobs/run/hello/"+action, adminToken, input, "X-Windforce-Trigger", "cli").
		want(http.StatusCreated).obj()["id"].(string)
}

// job reads a job through the API.
func (e *env) job(id string) map[string]any {
	e.t.Helper()
	return e.call("GET", "/api/w/ws/jobs/"+id, adminToken, "").want(http.StatusOK).obj()
}

// retag deploys hello with its jobs routed to tag.
func (e *env) retag(tag string) {
	e.t.Helper()
	m, err := os.ReadFile(filepath.Join(gittest.Example("hello"), "windforce.yaml"))
	if err != nil {
		e.t.Fatal(err)
	}
	e.deploy("hello", map[string]string{"windforce.yaml": strings.Replace(string(m), "tag: default", "tag: "+tag, 1)}).want(http.StatusOK)
}

// TestBulkRequeueByFilter: after hello moves to tag gpu, requeueing the
// waiting greet jobs by app and action moves exactly those (each as the
// single requeue: old canceled naming the new, new on the new tag with the
// same input, counted once each); the running greet job and the waiting
// sleep job are untouched. In batches of one, the cursor visits each job
// once and never the new jobs.
func TestBulkRequeueByFilter(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		running := e.run("greet", `{"name":"Run"}`)
		if c, err := e.db.Claim(t.Context(), spine.ClaimParams{Worker: "w-1", Tags: []string{spine.DefaultTag}, Limit: 1}); err != nil || len(c) != 1 {
			t.Fatalf("claim: %v %v", c, err)
		}
		a, b := e.run("greet", `{"name":"Ada"}`), e.run("greet", `{"name":"Bob"}`)
		sleep := e.run("sleep", `{"seconds":1}`)
		e.retag("gpu")
		counted := e.enqueuedCount("cli")

		first := e.requeueJobs(`{"app":"hello","action":"greet","limit":1}`)
		if len(first.Requeued) != 1 || first.Requeued[0].From != b || len(first.Skipped) != 0 || first.NextCursor == nil {
			t.Fatalf("first batch %+v, want job %s (the newest) and a cursor", first, b)
		}
		second := e.requeueJobs(`{"app":"hello","action":"greet","limit":1,"cursor":"` + *first.NextCursor + `"}`)
		if len(second.Requeued) != 1 || second.Requeued[0].From != a || second.NextCursor != nil {
			t.Fatalf("second batch %+v, want job %s and no cursor", second, a)
		}
		e.wantEnqueued("bulk requeue", "cli", counted, 2)

		for _, m := range append(first.Requeued, second.Requeued...) {
			was, now := e.job(m.From), e.job(m.To)
			if was["status"] != "canceled" || !strings.Contains(was["canceled_reason"].(string), m.To) {
				t.Fatalf("old job %s after bulk requeue: %v", m.From, was)
			}
			if now["status"] != "queued" || now["tag"] != "gpu" || now["trigger_kind"] != "cli" || !reflect.DeepEqual(now["input"], was["input"]) {
				t.Fatalf("new job %s: %v, want queued on tag gpu with the old input", m.To, now)
			}
		}
		if j := e.job(running); j["status"] != "running" {
			t.Fatalf("running job after bulk requeue: %v", j)
		}
		if j := e.job(sleep); j["status"] != "queued" || j["tag"] != "default" {
			t.Fatalf("sleep job (not in the filter) after bulk requeue: %v", j)
		}
		// The moved jobs wait on gpu now; by the old tag nothing of greet is left.
		if none := e.requeueJobs(`{"action":"greet","tag":"default"}`); len(none.Requeued)+len(none.Skipped) != 0 {
			t.Fatalf("requeue by the old tag found %+v", none)
		}
		if moved := e.requeueJobs(`{"tag":"default"}`); len(moved.Requeued) != 1 || moved.Requeued[0].From != sleep {
			t.Fatalf("requeue by tag default: %+v, want the sleep job", moved)
		}
	})
}

// TestBulkRequeueByIDs: named jobs that do not wait, do not exist, do not
// match the filter or whose input the new schema refuses are skipped, each
// with the code and reason the single requeue would answer, and stay as
// they were; the waiting one that fits is requeued, a repeated id once.
func TestBulkRequeueByIDs(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		running := e.run("greet", `{"name":"Run"}`)
		if c, err := e.db.Claim(t.Context(), spine.ClaimParams{Worker: "w-1", Tags: []string{spine.DefaultTag}, Limit: 1}); err != nil || len(c) != 1 {
			t.Fatalf("claim: %v %v", c, err)
		}
		ok := e.run("greet", `{"name":"Ada"}`)
		refused := e.run("greet", `{"name":"Bo"}`)
		sleep := e.run("sleep", `{"seconds":1}`)
		canceled := e.run("greet", `{"name":"Cy"}`)
		e.call("POST", "/api/w/ws/jobs/"+canceled+"/cancel", adminToken, "").want(http.StatusOK)
		const unknown = "00000000-0000-7000-8000-000000000000"
		e.deploy("hello", map[string]string{"schemas/greet.input.json": `{"type":"object","properties":{"name":{"minLength":3}}}`}).want(http.StatusOK)

		ids, _ := json.Marshal([]string{running, ok, refused, sleep, canceled, unknown, ok})
		out := e.requeueJobs(`{"action":"greet","ids":` + string(ids) + `}`)
		if len(out.Requeued) != 1 || out.Requeued[0].From != ok || out.NextCursor != nil {
			t.Fatalf("requeued %+v, want only %s", out.Requeued, ok)
		}
		want := map[string]string{running: "conflict", refused: "invalid_input", sleep: "conflict", canceled: "conflict", unknown: "not_found"}
		got := map[string]string{}
		for _, s := range out.Skipped {
			got[s.ID] = s.Code
			if s.Reason == "" {
				t.Errorf("skipped %s without a reason", s.ID)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("skipped %+v, want codes %v", out.Skipped, want)
		}
		for _, s := range out.Skipped {
			if s.ID == running && !strings.Contains(s.Reason, "running") || s.ID == sleep && !strings.Contains(s.Reason, `action "sleep"`) {
				t.Errorf("skip reason of %s does not say why: %q", s.ID, s.Reason)
			}
		}
		for id, status := range map[string]string{running: "running", refused: "queued", sleep: "queued", canceled: "canceled"} {
			if j := e.job(id); j["status"] != status {
				t.Fatalf("skipped job %s: %v, want %s", id, j, status)
			}
		}
	})
}

// TestBulkRequeueBadRequest: a body that picks nothing, too much, or
// cannot be read is 400 naming why, and creates or cancels nothing.
func TestBulkRequeueBadRequest(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		e.run("greet", `{"name":"Ada"}`)
		tooMany := make([]string, 101)
		for i := range tooMany {
			tooMany[i] = uuid.NewString()
		}
		many, _ := json.Marshal(map[string]any{"ids": tooMany})
		before := e.counts()
		for body, says := range map[string]string{
			``:                 "at least one",
			`{}`:               "at least one",
			`{"app":""}`:       "at least one",
			`{"ids":[]}`:       "ids",
			`{"ids":["nope"]}`: "not a job id",
			`{"ids":["00000000-0000-0000-0000-000000000000"]}`: "nil uuid",
			string(many):                        "at most 100",
			`{"app":"hello","limit":101}`:       "limit",
			`{"app":"hello","limit":-1}`:        "limit",
			`{"app":"hello","cursor":"x"}`:      "cursor",
			`{"app":"hello","stauts":"queued"}`: "unknown field",
			`{"app":"hello","tag":"a\u0000b"}`:  "NUL",
			`[1]`:                               "request body",
		} {
			r := e.call("POST", "/api/w/ws/jobs/requeue", adminToken, body)
			r.wantError(http.StatusBadRequest, "bad_request")
			if !strings.Contains(string(r.body), says) {
				t.Errorf("body %q: answer %s does not say %q", body, r.body, says)
			}
		}
		if after := e.counts(); !reflect.DeepEqual(after, before) {
			t.Fatalf("refused bulk requeues wrote: counts %v, then %v", before, after)
		}
	})
}
