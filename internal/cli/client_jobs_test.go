package cli

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

// TestJobsListPages lists jobs with filters, pages with the cursor the
// server hands out, and shows a bad filter's 400 with the parameter.
func TestJobsListPages(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *apiEnv) {
		ids := map[string]bool{}
		for _, name := range []string{"A", "B", "C"} {
			ids[strings.TrimSpace(e.mustRun("run", "hello/greet", "--input", `{"name":"`+name+`"}`).stdout)] = true
		}
		first := e.mustRun("jobs", "list", "--app", "hello", "--trigger", "cli", "--limit", "2")
		m := regexp.MustCompile(`--cursor (\S+)`).FindStringSubmatch(first.stderr)
		if m == nil {
			t.Fatalf("jobs list printed no next-page hint on stderr: %q", first.stderr)
		}
		if !strings.Contains(first.stdout, "STATUS") || strings.Count(first.stdout, "hello/greet") != 2 {
			t.Fatalf("first page:\n%s", first.stdout)
		}
		rest := obj(t, e.mustRun("jobs", "list", "--app", "hello", "--limit", "2", "--cursor", m[1], "--json").stdout)
		jobs := rest["jobs"].([]any)
		if len(jobs) != 1 || rest["next_cursor"] != nil {
			t.Fatalf("second page %v, want one job and no cursor", rest)
		}
		if id := jobs[0].(map[string]any)["id"].(string); !ids[id] || strings.Contains(first.stdout, id) {
			t.Fatalf("second page's job %s is not the one left over", id)
		}
		if none := obj(t, e.mustRun("jobs", "list", "--status", "success", "--json").stdout); len(none["jobs"].([]any)) != 0 {
			t.Fatalf("success jobs with no worker: %v", none)
		}
		r := e.run("jobs", "list", "--status", "sleepy")
		var apiErr *APIError
		if !errors.As(r.err, &apiErr) || apiErr.Status != 400 || !strings.Contains(r.err.Error(), "parameter: status") {
			t.Fatalf("bad status filter: %v", r.err)
		}
	})
}

// TestJobsLogsAndReopen reads a finished job's logs (plain and -f over
// the server's stream) and reopens a failed job.
func TestJobsLogsAndReopen(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *apiEnv) {
		e.startWorker()
		ok := e.mustRun("run", "hello/greet", "--input", `{"name":"Lu"}`, "--wait", "--json")
		id := obj(t, ok.stdout)["id"].(string)
		if logs := e.mustRun("jobs", "logs", id); logs.stdout != "greeting Lu\n" {
			t.Fatalf("jobs logs %q", logs.stdout)
		}
		if logs := e.mustRun("jobs", "logs", id, "-f"); logs.stdout != "greeting Lu\n" || !strings.Contains(logs.stderr, "ended: success") {
			t.Fatalf("jobs logs -f %q / %q", logs.stdout, logs.stderr)
		}
		if res := e.mustRun("jobs", "result", id); obj(t, res.stdout)["greeting"] != "Hello, Lu!" {
			t.Fatalf("jobs result %q", res.stdout)
		}

		failed := e.run("run", "hello/fail", "--input", `{"message":"again"}`, "--wait")
		var fe *JobFailedError
		if !errors.As(failed.err, &fe) {
			t.Fatalf("fail: %v", failed.err)
		}
		re := e.mustRun("jobs", "reopen", fe.ID, "--reason", "flaky")
		if !strings.Contains(re.stdout, "reopened") {
			t.Fatalf("jobs reopen printed %q", re.stdout)
		}
		if r := e.run("jobs", "result", fe.ID, "--json"); ExitCode(r.err) != 1 || obj(t, r.stdout)["id"] != fe.ID {
			t.Fatalf("jobs result --json of the reopened job: %v %q", r.err, r.stdout)
		}
		var apiErr *APIError
		if r := e.run("jobs", "reopen", id); !errors.As(r.err, &apiErr) || apiErr.Status != 409 {
			t.Fatalf("reopen of a succeeded job: %v, want 409", r.err)
		}
		if r := e.run("jobs", "get", "not-a-job"); !errors.As(r.err, &apiErr) || apiErr.Status != 404 {
			t.Fatalf("jobs get of an unknown id: %v", r.err)
		}
	})
}

// TestPrintJobShowsLabels: `jobs get` shows who acted as token:<id> with
// the token's label beside it, never the label alone.
func TestPrintJobShowsLabels(t *testing.T) {
	var b strings.Builder
	j := apiJob{ID: "j1", CreatedBy: "token:ab12", CreatedByLabel: "ci", CanceledBy: "job:p1", Input: []byte(`{}`)}
	if err := printJob(&b, j); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "token:ab12 (ci)") || !strings.Contains(b.String(), "job:p1") {
		t.Fatalf("printJob wrote:\n%s", b.String())
	}
}
