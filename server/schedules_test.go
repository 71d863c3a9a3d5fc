package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/schedule/scheduletest"
)

// nextRuns reads a next_runs array and checks it holds n ascending
// RFC 3339 times.
func nextRuns(t *testing.T, v any, n int) []time.Time {
	t.Helper()
	raw, ok := v.([]any)
	if !ok || len(raw) != n {
		t.Fatalf("next_runs = %v, want %d times", v, n)
	}
	out := make([]time.Time, n)
	for i, r := range raw {
		ts, err := time.Parse(time.RFC3339, r.(string))
		if err != nil {
			t.Fatalf("next_runs[%d] = %v: %v", i, r, err)
		}
		if i > 0 && !ts.After(out[i-1]) {
			t.Fatalf("next_runs not ascending: %v", raw)
		}
		out[i] = ts
	}
	return out
}

// TestSchedulesRoutes: create, read, list, disable, enable, delete, and the
// preview, on both backends.
func TestSchedulesRoutes(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		reader := e.call("POST", "/api/tokens", adminToken, `{"workspace":"ws","scopes":["read"]}`).want(http.StatusCreated).obj()["token"].(string)
		const base = "/api/w/ws/schedules"

		q := url.Values{"cron": {"0 9 * * MON-FRI"}, "timezone": {"Europe/Berlin"}}
		runs := nextRuns(t, e.call("GET", base+"/preview?"+q.Encode(), reader, "").want(http.StatusOK).obj()["next_runs"], 5)
		berlin, _ := time.LoadLocation("Europe/Berlin")
		for _, r := range runs {
			if l := r.In(berlin); l.Hour() != 9 || l.Minute() != 0 || l.Weekday() == time.Saturday || l.Weekday() == time.Sunday {
				t.Fatalf("preview run %s is not 09:00 on a weekday in Berlin", l)
			}
		}

		created := e.call("POST", base, adminToken, `{"app":"hello","action":"greet","cron":"*/5 * * * *",
			"timezone":"Europe/Berlin","input":{"name":"Ada"},"no_overlap":true}`).want(http.StatusCreated).obj()
		keys := []string{}
		for k := range created {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		want := "[action app created_at created_by cron enabled id input last_job_id last_run_at next_run_at next_runs no_overlap timezone workspace]"
		if got := fmt.Sprint(keys); got != want {
			t.Fatalf("schedule keys %s, want %s", got, want)
		}
		id := created["id"].(string)
		if _, err := uuid.Parse(id); err != nil || created["workspace"] != "ws" || created["app"] != "hello" ||
			created["action"] != "greet" || created["cron"] != "*/5 * * * *" || created["timezone"] != "Europe/Berlin" ||
			created["enabled"] != true || created["no_overlap"] != true || created["last_run_at"] != nil ||
			created["last_job_id"] != nil || created["created_by"] == "" {
			t.Fatalf("created %v", created)
		}
		if in := created["input"].(map[string]any); in["name"] != "Ada" {
			t.Fatalf("input %v", created["input"])
		}
		runs = nextRuns(t, created["next_runs"], 5)
		if next, _ := time.Parse(time.RFC3339, created["next_run_at"].(string)); !next.Equal(runs[0]) ||
			runs[1].Sub(runs[0]) != 5*time.Minute || runs[0].Minute()%5 != 0 || runs[0].Second() != 0 {
			t.Fatalf("next_run_at %v, next_runs %v", created["next_run_at"], runs)
		}

		list := e.call("GET", base, reader, "").want(http.StatusOK).obj()["schedules"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["id"] != id {
			t.Fatalf("list = %v", list)
		}
		if got := e.call("GET", base+"/"+id, reader, "").want(http.StatusOK).obj(); got["id"] != id || got["cron"] != "*/5 * * * *" {
			t.Fatalf("get = %v", got)
		}

		off := e.call("PATCH", base+"/"+id, adminToken, `{"enabled":false}`).want(http.StatusOK).obj()
		if off["enabled"] != false || len(off["next_runs"].([]any)) != 0 {
			t.Fatalf("disabled = %v, want no next runs", off)
		}
		on := e.call("PATCH", base+"/"+id, adminToken, `{"enabled":true}`).want(http.StatusOK).obj()
		if on["enabled"] != true {
			t.Fatalf("enabled = %v", on)
		}
		nextRuns(t, on["next_runs"], 5)
		if d := e.call("PATCH", base+"/"+id, adminToken, `{}`).wantError(http.StatusBadRequest, "bad_request"); d["field"] != "enabled" {
			t.Fatalf("patch without enabled: details %v", d)
		}

		// The read scope reads; writing needs admin.
		e.call("POST", base, reader, `{"app":"hello","action":"greet","cron":"* * * * *","input":{"name":"x"}}`).wantError(http.StatusForbidden, "forbidden")
		e.call("PATCH", base+"/"+id, reader, `{"enabled":false}`).wantError(http.StatusForbidden, "forbidden")
		e.call("DELETE", base+"/"+id, reader, "").wantError(http.StatusForbidden, "forbidden")

		if r := e.call("DELETE", base+"/"+id, adminToken, "").want(http.StatusNoContent); len(r.body) != 0 {
			t.Fatalf("delete answered a body: %s", r.body)
		}
		e.call("GET", base+"/"+id, reader, "").wantError(http.StatusNotFound, "not_found")
		e.call("DELETE", base+"/"+id, adminToken, "").wantError(http.StatusNotFound, "not_found")
		e.call("PATCH", base+"/"+id, adminToken, `{"enabled":true}`).wantError(http.StatusNotFound, "not_found")
		e.call("GET", base+"/not-a-uuid", reader, "").wantError(http.StatusNotFound, "not_found")
		if list := e.call("GET", base, reader, "").want(http.StatusOK).obj()["schedules"].([]any); len(list) != 0 {
			t.Fatalf("list after delete = %v", list)
		}
	})
}

// TestSchedulesRefused: each refusal answers its status and error body and
// stores no schedule (and makes no job).
func TestSchedulesRefused(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		const base = "/api/w/ws/schedules"
		cases := []struct {
			name, body string
			status     int
			code       string
			field      string
		}{
			{"bad cron", `{"app":"hello","action":"greet","cron":"every day","input":{"name":"Ada"}}`, 400, "bad_request", "cron"},
			{"cron out of range", `{"app":"hello","action":"greet","cron":"61 * * * *","input":{"name":"Ada"}}`, 400, "bad_request", "cron"},
			{"never fires", `{"app":"hello","action":"greet","cron":"0 0 30 2 *","input":{"name":"Ada"}}`, 400, "bad_request", "cron"},
			{"bad zone", `{"app":"hello","action":"greet","cron":"* * * * *","timezone":"Mars/Base","input":{"name":"Ada"}}`, 400, "bad_request", "timezone"},
			{"no app", `{"action":"greet","cron":"* * * * *"}`, 400, "bad_request", "app"},
			{"no cron", `{"app":"hello","action":"greet"}`, 400, "bad_request", "cron"},
			{"empty body", ``, 400, "bad_request", "app"},
			{"bad JSON", `{"app":`, 400, "bad_request", ""},
			{"unknown field", `{"app":"hello","action":"greet","cron":"* * * * *","crontab":"x"}`, 400, "bad_request", ""},
			{"NUL", `{"app":"hello","action":"greet","cron":"* * * * *","input":{"name":"a\u0000"}}`, 400, "bad_request", ""},
			{"unknown app", `{"app":"nope","action":"greet","cron":"* * * * *","input":{}}`, 404, "not_found", ""},
			{"unknown action", `{"app":"hello","action":"nope","cron":"* * * * *","input":{}}`, 404, "not_found", ""},
			{"input mismatch", `{"app":"hello","action":"greet","cron":"* * * * *","input":{"name":1}}`, 422, "invalid_input", ""},
			{"input missing", `{"app":"hello","action":"greet","cron":"* * * * *"}`, 422, "invalid_input", ""},
		}
		jobs := e.jobCount()
		for _, c := range cases {
			d := e.call("POST", base, adminToken, c.body).wantError(c.status, c.code)
			if c.field != "" && d["field"] != c.field {
				t.Fatalf("%s: details %v, want field %q", c.name, d, c.field)
			}
			if c.name == "input mismatch" {
				fields := d["fields"].([]any)
				if len(fields) == 0 || fields[0].(map[string]any)["pointer"] != "/name" {
					t.Fatalf("%s: details %v, want a field at /name", c.name, d)
				}
			}
			if list, err := e.db.ListSchedules(t.Context(), ws); err != nil || len(list) != 0 {
				t.Fatalf("%s: schedules %v, %v; want none stored", c.name, list, err)
			}
		}
		for _, q := range []string{"cron=nope", "cron=*+*+*+*+*&timezone=Nowhere/City", ""} {
			e.call("GET", base+"/preview?"+q, adminToken, "").wantError(400, "bad_request")
		}
		if n := e.jobCount(); n != jobs {
			t.Fatalf("%d jobs after refusals, want %d", n, jobs)
		}
	})
}

// TestSchedulersFireEachTickOnce: a schedule made through the API, two
// Scheduler instances on one database (as two servers) and a fake clock
// moved over several ticks of an every-second schedule: each tick makes
// exactly one job, and ten ticks missed while no server ran make one.
func TestSchedulersFireEachTickOnce(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		created := e.call("POST", "/api/w/ws/schedules", adminToken,
			`{"app":"hello","action":"greet","cron":"* * * * * *","input":{"name":"Ada"}}`).want(http.StatusCreated).obj()
		sc, err := e.db.GetSchedule(t.Context(), ws, uuid.MustParse(created["id"].(string)))
		if err != nil {
			t.Fatal(err)
		}
		scheduletest.CheckTwoSchedulers(t, e.db, sc)
		after := e.call("GET", "/api/w/ws/schedules/"+sc.ID.String(), adminToken, "").want(http.StatusOK).obj()
		if after["last_job_id"] == nil || after["last_run_at"] == nil {
			t.Fatalf("after firing: %v, want last run and job", after)
		}
		job := e.call("GET", "/api/w/ws/jobs/"+after["last_job_id"].(string), adminToken, "").want(http.StatusOK).obj()
		if job["trigger_kind"] != "schedule" || job["app"] != "hello" || job["action"] != "greet" {
			t.Fatalf("job of the last tick: %v", job)
		}
	})
}
