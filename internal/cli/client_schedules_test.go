package cli

import (
	"errors"
	"strings"
	"testing"
)

// TestSchedules adds, lists and removes a schedule; a bad cron expression
// shows the field at fault.
func TestSchedules(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *apiEnv) {
		add := obj(t, e.mustRun("schedules", "add", "hello/greet", "--cron", "*/5 * * * *", "--timezone", "Europe/Berlin",
			"--input", `{"name":"Sched"}`, "--no-overlap", "--json").stdout)
		id, _ := add["id"].(string)
		if id == "" || add["no_overlap"] != true || add["timezone"] != "Europe/Berlin" || add["next_run_at"] == nil {
			t.Fatalf("schedules add --json: %v", add)
		}
		plain := e.mustRun("schedules", "add", "hello/greet", "--cron", "0 3 * * *", "--input", `{"name":"Night"}`)
		if !strings.Contains(plain.stdout, "added: hello/greet") {
			t.Fatalf("schedules add printed %q", plain.stdout)
		}
		list := e.mustRun("schedules", "list")
		if !strings.Contains(list.stdout, id) || !strings.Contains(list.stdout, "*/5 * * * *") || !strings.Contains(list.stdout, "Europe/Berlin") {
			t.Fatalf("schedules list:\n%s", list.stdout)
		}
		var apiErr *APIError
		r := e.run("schedules", "add", "hello/greet", "--cron", "every tuesday")
		if !errors.As(r.err, &apiErr) || apiErr.Status != 400 || !strings.Contains(r.err.Error(), "field: cron") {
			t.Fatalf("bad cron: %v", r.err)
		}
		if r := e.run("schedules", "add", "hello/greet", "--cron", "* * * * *", "--input", `{"name":7}`); !errors.As(r.err, &apiErr) || apiErr.Status != 422 {
			t.Fatalf("schedule with a bad input: %v", r.err)
		}
		if r := e.run("schedules", "add", "hello/greet"); ExitCode(r.err) != 2 {
			t.Fatalf("schedules add without --cron: %v", r.err)
		}
		if rm := e.mustRun("schedules", "rm", id); !strings.Contains(rm.stdout, "removed") {
			t.Fatalf("schedules rm printed %q", rm.stdout)
		}
		if left := obj(t, e.mustRun("schedules", "list", "--json").stdout)["schedules"].([]any); len(left) != 1 {
			t.Fatalf("schedules after rm: %v", left)
		}
		if r := e.run("schedules", "rm", id); !errors.As(r.err, &apiErr) || apiErr.Status != 404 {
			t.Fatalf("second rm: %v, want 404", r.err)
		}
	})
}
