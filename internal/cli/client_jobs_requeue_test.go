package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/windforce/windforce/internal/gittest"
)

// TestJobsRequeue: after hello moves to tag gpu, `jobs requeue --app
// hello --batch 1` moves every waiting job to gpu in batches of one, each
// once (the new jobs, which match too, are never revisited); named ids that cannot be requeued are printed with why; no
// filter is a usage error and a bad id the API's 400.
func TestJobsRequeue(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *apiEnv) {
		var old []string
		for _, name := range []string{"A", "B", "C"} {
			old = append(old, strings.TrimSpace(e.mustRun("run", "hello/greet", "--input", `{"name":"`+name+`"}`).stdout))
		}
		m, err := os.ReadFile(filepath.Join(gittest.Example("hello"), "windforce.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		e.api.Repo.Write(t, map[string]string{"windforce.yaml": strings.Replace(string(m), "tag: default", "tag: gpu", 1)})
		e.api.Repo.CommitPush(t, "route hello to gpu")
		e.mustRun("sources", "sync", "main")

		// The new jobs match --app hello too: only the cursor keeps the
		// command from requeueing them again, forever.
		out := e.mustRun("jobs", "requeue", "--app", "hello", "--batch", "1").stdout
		if strings.Count(out, "requeued ") != 3 || !strings.Contains(out, "3 waiting jobs requeued, 0 jobs skipped") {
			t.Fatalf("jobs requeue printed:\n%s", out)
		}
		for _, id := range old {
			if !strings.Contains(out, "requeued "+id+" as ") {
				t.Fatalf("job %s was not requeued:\n%s", id, out)
			}
			if j := obj(t, e.mustRun("jobs", "get", id, "--json").stdout); j["status"] != "canceled" {
				t.Fatalf("old job %s: %v", id, j)
			}
		}
		list := obj(t, e.mustRun("jobs", "list", "--status", "queued", "--tag", "gpu", "--json").stdout)
		if n := len(list["jobs"].([]any)); n != 3 {
			t.Fatalf("%d jobs wait on gpu, want 3", n)
		}

		named := e.mustRun("jobs", "requeue", old[0], "--json").stdout
		skipped := obj(t, named)["skipped"].([]any)
		if len(skipped) != 1 || !strings.Contains(skipped[0].(map[string]any)["reason"].(string), "finished with status canceled") {
			t.Fatalf("requeue of a canceled job: %s", named)
		}
		if r := e.run("jobs", "requeue"); !errors.As(r.err, new(*UsageError)) {
			t.Fatalf("requeue without a filter: %v, want a usage error", r.err)
		}
		var apiErr *APIError
		if r := e.run("jobs", "requeue", "not-a-job"); !errors.As(r.err, &apiErr) || apiErr.Status != 400 {
			t.Fatalf("requeue of a bad id: %v, want 400", r.err)
		}
	})
}
