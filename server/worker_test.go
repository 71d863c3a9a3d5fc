package server_test

import (
	"strings"
	"testing"

	"github.com/windforce/windforce/internal/apitest"
)

// TestRunWaitWithWorker runs examples/hello through a real worker: ?wait
// answers 200 with the result, or with the error of a failed job, and the
// job's logs hold its output.
func TestRunWaitWithWorker(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		apitest.StartWorker(t, e.api, "bun", apitest.WorkerOptions{})
		ok := e.call("POST", "/api/w/ws/jobs/run/hello/greet?wait=60s", adminToken, `{"name":"Ada"}`).want(200).obj()
		if ok["status"] != "success" || ok["result"].(map[string]any)["greeting"] != "Hello, Ada!" {
			t.Fatalf("greet answered %v", ok)
		}
		logs := e.call("GET", "/api/w/ws/jobs/"+ok["id"].(string)+"/logs", adminToken, "").want(200)
		if !strings.Contains(string(logs.body), "greeting Ada") {
			t.Fatalf("logs %q", logs.body)
		}
		job := e.call("GET", "/api/w/ws/jobs/"+ok["id"].(string), adminToken, "").want(200).obj()
		if job["worker"] != "test-worker" || job["started_at"] == nil || job["completed_at"] == nil {
			t.Fatalf("finished job %v", job)
		}
		bad := e.call("POST", "/api/w/ws/jobs/run/hello/fail?wait=60s", adminToken, `{"message":"boom"}`).want(200).obj()
		if bad["status"] != "failure" || !strings.Contains(bad["error"].(map[string]any)["message"].(string), "boom") {
			t.Fatalf("fail answered %v", bad)
		}
		if _, has := bad["result"]; has {
			t.Fatalf("failed job answered a result: %v", bad)
		}
	})
}
