package server_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/spine"
)

// counts reads the workspace's jobs per status.
func (e *env) counts() map[spine.Status]int64 {
	e.t.Helper()
	c, err := e.db.CountJobs(e.t.Context(), ws)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// TestRequeueWaitingJob: after a redeploy, requeue moves a waiting job to
// the new commit: the old job ends canceled with a reason naming the new
// one, which keeps the trigger, creator, priority and input. Requeue of a
// finished job is 409 and writes nothing.
func TestRequeueWaitingJob(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		old := e.call("POST", "/api/w/ws/jobs/run/hello/greet?priority=7", adminToken, `{"name":"Ada"}`,
			"X-Windforce-Trigger", "cli").want(http.StatusCreated).obj()["id"].(string)
		commit := e.deploy("hello", map[string]string{"README.md": "v2\n"}).want(http.StatusOK).obj()["commit"].(string)
		if commit == e.sync1["commit"] {
			t.Fatal("the redeploy did not make a new commit")
		}

		out := e.call("POST", "/api/w/ws/jobs/"+old+"/requeue", adminToken, "").want(http.StatusCreated).obj()
		id, _ := out["id"].(string)
		if out["requeued_from"] != old || id == "" || id == old {
			t.Fatalf("requeue answered %v", out)
		}
		was := e.call("GET", "/api/w/ws/jobs/"+old, adminToken, "").want(http.StatusOK).obj()
		if was["status"] != "canceled" || was["canceled_by"] != "token:admin" ||
			!strings.Contains(was["canceled_reason"].(string), id) || was["commit_sha"] != e.sync1["commit"] {
			t.Fatalf("old job after requeue: %v", was)
		}
		now := e.call("GET", "/api/w/ws/jobs/"+id, adminToken, "").want(http.StatusOK).obj()
		if now["status"] != "queued" || now["commit_sha"] != commit || now["trigger_kind"] != "cli" ||
			now["created_by"] != was["created_by"] || now["priority"].(interface{ String() string }).String() != "7" ||
			!reflect.DeepEqual(now["input"], was["input"]) || now["action"] != "greet" {
			t.Fatalf("requeued job %v, want queued on %s with the old job's trigger, creator, priority and input", now, commit)
		}

		before := e.counts()
		e.call("POST", "/api/w/ws/jobs/"+old+"/requeue", adminToken, "").wantError(http.StatusConflict, "conflict")
		e.call("POST", "/api/w/ws/jobs/00000000-0000-7000-8000-000000000000/requeue", adminToken, "").wantError(http.StatusNotFound, "not_found")
		e.call("POST", "/api/w/other/jobs/"+id+"/requeue", adminToken, "").wantError(http.StatusNotFound, "not_found")
		if after := e.counts(); !reflect.DeepEqual(after, before) {
			t.Fatalf("refused requeues wrote: counts %v, then %v", before, after)
		}
	})
}

// TestRequeueRefused: a running job is 409 and an input the new schema
// refuses is 422; neither writes anything and the job stays as it was.
func TestRequeueRefused(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		running := e.call("POST", "/api/w/ws/jobs/run/hello/greet", adminToken, `{"name":"Ada"}`).want(http.StatusCreated).obj()["id"].(string)
		claimed, err := e.db.Claim(t.Context(), spine.ClaimParams{Worker: "w-1", Tags: []string{spine.DefaultTag}, Limit: 1})
		if err != nil || len(claimed) != 1 || claimed[0].ID.String() != running {
			t.Fatalf("claim: %v %v", claimed, err)
		}
		waiting := e.call("POST", "/api/w/ws/jobs/run/hello/greet", adminToken, `{"name":"Bob"}`).want(http.StatusCreated).obj()["id"].(string)
		// The new greet schema requires a field the waiting job's input lacks.
		e.deploy("hello", map[string]string{"schemas/greet.input.json": `{"type":"object","required":["title"]}`}).want(http.StatusOK)

		before := e.counts()
		e.call("POST", "/api/w/ws/jobs/"+running+"/requeue", adminToken, "").wantError(http.StatusConflict, "conflict")
		e.call("POST", "/api/w/ws/jobs/"+waiting+"/requeue", adminToken, "").wantError(http.StatusUnprocessableEntity, "invalid_input")
		if after := e.counts(); !reflect.DeepEqual(after, before) {
			t.Fatalf("refused requeues wrote: counts %v, then %v", before, after)
		}
		for id, status := range map[string]string{running: "running", waiting: "queued"} {
			j := e.call("GET", "/api/w/ws/jobs/"+id, adminToken, "").want(http.StatusOK).obj()
			if j["status"] != status || j["canceled_by"] != "" {
				t.Fatalf("job %s after a refused requeue: %v, want %s", id, j, status)
			}
		}
		audit, err := e.db.Audit(t.Context(), claimed[0].ID)
		if err != nil || len(audit) != 0 {
			t.Fatalf("audit of the running job after a refused requeue: %v %v", audit, err)
		}
	})
}

// TestRequeueKeepsNoOverlap: a no-overlap schedule whose waiting job is
// requeued follows the new job, so the next tick is still skipped while
// that job waits.
func TestRequeueKeepsNoOverlap(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		now := time.Now().UTC().Truncate(time.Second)
		sc, err := schedule.New(schedule.Schedule{Workspace: ws, App: "hello", Action: "greet", Cron: "* * * * * *",
			Input: json.RawMessage(`{"name":"tick"}`), NoOverlap: true, Enabled: true}, now)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.db.CreateSchedule(ctx, sc); err != nil {
			t.Fatal(err)
		}
		fired, job, err := e.db.FireTick(ctx, sc, sc.NextRunAt.Add(time.Second))
		if err != nil || !fired || job == uuid.Nil {
			t.Fatalf("first tick: %t %s %v", fired, job, err)
		}
		e.call("POST", "/api/w/ws/jobs/"+job.String()+"/requeue", adminToken, "").want(http.StatusCreated)
		sc, err = e.db.GetSchedule(ctx, ws, sc.ID)
		if err != nil {
			t.Fatal(err)
		}
		fired, next, err := e.db.FireTick(ctx, sc, sc.NextRunAt.Add(time.Second))
		if err != nil || !fired || next != uuid.Nil {
			t.Fatalf("second tick while the requeued job waits: fired %t, job %s, %v; want skipped", fired, next, err)
		}
	})
}
