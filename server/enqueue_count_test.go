package server_test

import (
	"net/http"
	"testing"

	"github.com/windforce/windforce/metrics/metricstest"
)

// enqueuedCount is windforce_jobs_enqueued_total{trigger,workspace="ws"}
// as the server serves it; 0 when the sample is absent.
func (e *env) enqueuedCount(trigger string) float64 {
	e.t.Helper()
	v, _ := metricstest.Get(e.t, e.url+"/metrics").Value("windforce_jobs_enqueued_total", "trigger", trigger, "workspace", ws)
	return v
}

// wantEnqueued fails unless the counter of trigger moved by exactly
// delta since before.
func (e *env) wantEnqueued(what, trigger string, before, delta float64) {
	e.t.Helper()
	if got := e.enqueuedCount(trigger); got != before+delta {
		e.t.Fatalf("%s: windforce_jobs_enqueued_total{trigger=%q} = %v, want %v", what, trigger, got, before+delta)
	}
}

// TestRequeueCounted: POST …/requeue puts a job in the queue, so it is
// counted once under the new job's trigger (the old job's); refused
// requeues (finished job, unknown job) and refused runs are not.
func TestRequeueCounted(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		old := e.call("POST", "/api/w/ws/jobs/run/hello/greet", adminToken, `{"name":"Ada"}`,
			"X-Windforce-Trigger", "cli").want(http.StatusCreated).obj()["id"].(string)
		e.wantEnqueued("run", "cli", 0, 1)

		e.call("POST", "/api/w/ws/jobs/"+old+"/requeue", adminToken, "").want(http.StatusCreated)
		e.wantEnqueued("requeue", "cli", 1, 1)

		e.call("POST", "/api/w/ws/jobs/"+old+"/requeue", adminToken, "").wantError(http.StatusConflict, "conflict")
		e.call("POST", "/api/w/ws/jobs/00000000-0000-7000-8000-000000000000/requeue", adminToken, "").wantError(http.StatusNotFound, "not_found")
		e.call("POST", "/api/w/ws/jobs/run/hello/greet", adminToken, `{"name":7}`,
			"X-Windforce-Trigger", "cli").wantError(http.StatusUnprocessableEntity, "invalid_input")
		e.wantEnqueued("refused requeues and run", "cli", 2, 0)
	})
}
