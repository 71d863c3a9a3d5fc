package store

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

// statusQueryNames are the job_status queries docs/QUEUE.md prints, each
// tested below on both databases.
var statusQueryNames = []string{"failed", "failed_last_hour", "stuck_running", "oldest_waiting"}

// docQueryMarker is the line before each query's ```sql block in
// docs/QUEUE.md: <!-- job_status:NAME:DIALECT -->, DIALECT one of
// postgres, sqlite or both.
var docQueryMarker = regexp.MustCompile("(?m)^<!-- job_status:([a-z_]+):(postgres|sqlite|both) -->\n```sql\n((?s:.*?))```")

// docQueries reads the job_status queries from docs/QUEUE.md: for each
// name, the SQL per dialect ("postgres", "sqlite"). It fails the test
// when a name is printed twice for a dialect, when a printed name is not
// tested, or when a tested name lacks a version for either database.
func docQueries(t *testing.T) map[string]map[string]string {
	t.Helper()
	doc, err := os.ReadFile("../docs/QUEUE.md")
	if err != nil {
		t.Fatalf("read docs/QUEUE.md: %v", err)
	}
	if n, m := strings.Count(string(doc), "<!-- job_status:"), len(docQueryMarker.FindAllIndex(doc, -1)); n != m {
		t.Fatalf("docs/QUEUE.md has %d job_status markers but %d are followed by a ```sql block", n, m)
	}
	out := map[string]map[string]string{}
	for _, m := range docQueryMarker.FindAllStringSubmatch(string(doc), -1) {
		name, dialect, query := m[1], m[2], strings.TrimSpace(m[3])
		if !slices.Contains(statusQueryNames, name) {
			t.Fatalf("docs/QUEUE.md prints job_status query %q, which no test runs", name)
		}
		if out[name] == nil {
			out[name] = map[string]string{}
		}
		for _, d := range []string{"postgres", "sqlite"} {
			if dialect != "both" && dialect != d {
				continue
			}
			if _, dup := out[name][d]; dup {
				t.Fatalf("docs/QUEUE.md prints job_status query %q twice for %s", name, d)
			}
			out[name][d] = query
		}
	}
	for _, name := range statusQueryNames {
		for _, d := range []string{"postgres", "sqlite"} {
			if out[name][d] == "" {
				t.Fatalf("docs/QUEUE.md lacks the %s version of job_status query %q", d, name)
			}
		}
	}
	return out
}

// dialectOf names s's database as the doc markers do.
func dialectOf(t *testing.T, s *Store) string {
	t.Helper()
	switch d := s.Driver().(type) {
	case *postgres.Driver:
		return "postgres"
	case *sqlite.Driver:
		return "sqlite"
	default:
		t.Fatalf("unknown driver %T", d)
		return ""
	}
}

// sqlRows runs query on s's database and returns its column names and its
// rows, each value as the database driver returns it (uuids as text).
func sqlRows(t *testing.T, s *Store, query string) ([]string, []map[string]any) {
	t.Helper()
	var cols []string
	var out []map[string]any
	switch d := s.Driver().(type) {
	case *postgres.Driver:
		rows, err := d.Pool().Query(t.Context(), query)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		defer rows.Close()
		for _, f := range rows.FieldDescriptions() {
			cols = append(cols, f.Name)
		}
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatalf("%s: %v", query, err)
			}
			row := map[string]any{}
			for i, v := range vals {
				if b, ok := v.([16]byte); ok {
					v = uuid.UUID(b).String()
				}
				row[cols[i]] = v
			}
			out = append(out, row)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	case *sqlite.Driver:
		rows, err := d.DB().QueryContext(t.Context(), query)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		defer rows.Close()
		if cols, err = rows.Columns(); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("%s: %v", query, err)
			}
			row := map[string]any{}
			for i, v := range vals {
				row[cols[i]] = v
			}
			out = append(out, row)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	default:
		t.Fatalf("unknown driver %T", d)
	}
	return cols, out
}

// column is one column of rows, each value formatted with %v.
func column(rows []map[string]any, name string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprint(r[name])
	}
	return out
}

// asInt reads an integer column value of either driver.
func asInt(t *testing.T, v any) int64 {
	t.Helper()
	switch n := v.(type) {
	case int64:
		return n
	case int32:
		return int64(n)
	case float64:
		return int64(n)
	default:
		t.Fatalf("value %v (%T) is not an integer", v, v)
		return 0
	}
}

// asTime reads a time column value of either driver: timestamptz on
// Postgres, microseconds since the epoch on SQLite; nil is the zero time.
func asTime(t *testing.T, v any) time.Time {
	t.Helper()
	switch x := v.(type) {
	case nil:
		return time.Time{}
	case time.Time:
		return x
	case int64:
		return time.UnixMicro(x)
	default:
		t.Fatalf("value %v (%T) is not a time", v, v)
		return time.Time{}
	}
}

// statusFixture is one job in each state the monitoring queries tell
// apart, made through the store's own operations.
type statusFixture struct {
	all                                  []uuid.UUID
	failedRecent, failedOld, failedRetry uuid.UUID
	stale, fresh                         uuid.UUID
	waitA, waitA2, waitB, future, reaped uuid.UUID
}

// newStatusFixture builds, relative to now (the test's clock, near the
// database's):
//   - reaped: claimed 10 min ago and requeued by the reaper (restarts 1,
//     a zombie last_error), waiting on tag "r";
//   - failedOld: failed 2 h ago; failedRecent: failed 10 min ago;
//   - failedRetry: failed its first of two attempts, waiting to retry;
//   - stale: running with its last ping 5 min ago; fresh: claimed now;
//   - a success and a canceled job;
//   - waitA (due 20 min ago) and waitA2 (due 5 min ago) on tag "a", waitB
//     (due 1 min ago) on tag "b", and future (due in an hour) on tag "b".
func newStatusFixture(t *testing.T, s *Store, now time.Time) statusFixture {
	t.Helper()
	ctx := t.Context()
	var f statusFixture
	enqueue := func(tag string, attempts int, at time.Time) uuid.UUID {
		t.Helper()
		p := queueJob(tag, attempts)
		p.Now = at
		res, err := s.Enqueue(ctx, p)
		if err != nil {
			t.Fatalf("enqueue on %s: %v", tag, err)
		}
		f.all = append(f.all, res.ID)
		return res.ID
	}
	claim := func(tag string, at time.Time) spine.ClaimedJob {
		t.Helper()
		return queueClaimOne(t, s, tag, at)
	}
	fail := func(tag string, attempts int, at time.Time, msg string) uuid.UUID {
		t.Helper()
		id := enqueue(tag, attempts, at.Add(-time.Second))
		j := claim(tag, at.Add(-time.Second))
		if _, err := s.Fail(ctx, spine.FailParams{Lease: leaseOf(j), Error: spine.JobError{Message: msg, Kind: "error"}, Now: at}); err != nil {
			t.Fatalf("fail %s: %v", msg, err)
		}
		return id
	}

	f.reaped = enqueue("r", 1, now.Add(-11*time.Minute))
	claim("r", now.Add(-10*time.Minute))
	if res, err := s.Reap(ctx, spine.ReapParams{Now: now, ZombieTimeout: time.Minute, RestartLimit: 3, Limit: 10}); err != nil || len(res.Requeued) != 1 {
		t.Fatalf("reap: %+v, %v; want one requeued", res, err)
	}

	f.failedOld = fail("f", 1, now.Add(-2*time.Hour), "old failure")
	f.failedRecent = fail("f", 1, now.Add(-10*time.Minute), "recent failure")
	f.failedRetry = fail("retry", 2, now.Add(-time.Minute), "first attempt failed")

	enqueue("ok", 1, now.Add(-3*time.Minute))
	if _, err := s.Complete(ctx, spine.CompleteParams{Lease: leaseOf(claim("ok", now.Add(-3*time.Minute))), Result: json.RawMessage(`{"ok":true}`), Now: now.Add(-2 * time.Minute)}); err != nil {
		t.Fatalf("complete: %v", err)
	}
	canceled := enqueue("gone", 1, now.Add(-time.Minute))
	if _, err := s.Cancel(ctx, spine.CancelParams{Workspace: "ws", JobID: canceled, By: "op", Reason: "not needed", Now: now}); err != nil {
		t.Fatalf("cancel: %v", err)
	}

	f.stale = enqueue("run", 1, now.Add(-6*time.Minute))
	claim("run", now.Add(-5*time.Minute))
	f.fresh = enqueue("run", 1, now.Add(-time.Second))
	claim("run", now)

	f.waitA = enqueue("a", 1, now.Add(-20*time.Minute))
	f.waitA2 = enqueue("a", 1, now.Add(-5*time.Minute))
	f.waitB = enqueue("b", 1, now.Add(-time.Minute))
	f.future = enqueue("b", 1, now.Add(time.Hour))
	return f
}

// job_status has one row per job, in the API's terms: for every job of
// every state, the status, attempt, restarts, error message, times and
// worker GetJob reports.
func TestJobStatusView(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		f := newStatusFixture(t, s, time.Now())
		cols, rows := sqlRows(t, s, "SELECT * FROM job_status ORDER BY id")
		want := []string{"id", "workspace", "app", "action", "tag", "status", "attempt", "restarts",
			"error", "created_at", "scheduled_for", "started_at", "completed_at", "worker"}
		if !slices.Equal(cols, want) {
			t.Fatalf("job_status columns %v, want %v", cols, want)
		}
		ids := make([]string, len(f.all))
		for i, id := range f.all {
			ids[i] = id.String()
		}
		sort.Strings(ids)
		if got := column(rows, "id"); !slices.Equal(got, ids) {
			t.Fatalf("job_status ids %v, want each job once: %v", got, ids)
		}
		statuses := map[spine.Status]int{}
		for _, r := range rows {
			id := uuid.MustParse(fmt.Sprint(r["id"]))
			j, err := s.GetJob(t.Context(), "ws", id)
			if err != nil {
				t.Fatalf("get %s: %v", id, err)
			}
			statuses[j.Status]++
			msg := ""
			if e := j.Error; e != nil {
				msg = e.Message
			} else if e := j.LastError; e != nil {
				msg = e.Message
			}
			gotErr := ""
			if r["error"] != nil {
				gotErr = fmt.Sprint(r["error"])
			}
			sched := j.ScheduledFor
			if j.Status.Terminal() {
				sched = time.Time{}
			}
			worker := ""
			if r["worker"] != nil {
				worker = fmt.Sprint(r["worker"])
			}
			for _, c := range []struct {
				col       string
				got, want any
			}{
				{"workspace", r["workspace"], j.Workspace},
				{"app", r["app"], j.Pin.AppKey},
				{"action", r["action"], j.Pin.ActionKey},
				{"tag", r["tag"], j.Pin.Tag},
				{"status", r["status"], string(j.Status)},
				{"attempt", asInt(t, r["attempt"]), int64(j.Attempt)},
				{"restarts", asInt(t, r["restarts"]), int64(j.Restarts)},
				{"error", gotErr, msg},
				{"worker", worker, j.Worker},
			} {
				if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
					t.Errorf("job %s (%s): %s = %v, want %v", id, j.Status, c.col, c.got, c.want)
				}
			}
			for _, c := range []struct {
				col  string
				want time.Time
			}{
				{"created_at", j.CreatedAt},
				{"scheduled_for", sched},
				{"started_at", timeOrZero(j.StartedAt)},
				{"completed_at", timeOrZero(j.CompletedAt)},
			} {
				if got := asTime(t, r[c.col]); !got.Equal(c.want) {
					t.Errorf("job %s (%s): %s = %v, want %v", id, j.Status, c.col, got, c.want)
				}
			}
		}
		wantStatuses := map[spine.Status]int{
			spine.StatusQueued: 6, spine.StatusRunning: 2, spine.StatusSuccess: 1,
			spine.StatusFailure: 2, spine.StatusCanceled: 1,
		}
		if fmt.Sprint(statuses) != fmt.Sprint(wantStatuses) {
			t.Fatalf("statuses %v, want %v", statuses, wantStatuses)
		}
		if _, reaped := sqlRows(t, s, fmt.Sprintf("SELECT restarts, error FROM job_status WHERE id = '%s'", f.reaped)); asInt(t, reaped[0]["restarts"]) != 1 ||
			!strings.Contains(fmt.Sprint(reaped[0]["error"]), "stopped heartbeating") {
			t.Fatalf("reaped job row %v, want restarts 1 and the zombie message", reaped)
		}
	})
}

// timeOrZero is *p, or the zero time for nil.
func timeOrZero(p *time.Time) time.Time {
	if p == nil {
		return time.Time{}
	}
	return *p
}

// The monitoring queries docs/QUEUE.md prints answer on both databases
// with the rows they promise.
func TestJobStatusDocQueries(t *testing.T) {
	queries := docQueries(t)
	forEachDriver(t, func(t *testing.T, s *Store) {
		now := time.Now()
		f := newStatusFixture(t, s, now)
		run := func(name string) []map[string]any {
			t.Helper()
			_, rows := sqlRows(t, s, queries[name][dialectOf(t, s)])
			return rows
		}

		t.Run("failed", func(t *testing.T) {
			rows := run("failed")
			if got, want := column(rows, "id"), []string{f.failedRecent.String(), f.failedOld.String()}; !slices.Equal(got, want) {
				t.Fatalf("failed ids %v, want %v (newest first)", got, want)
			}
			if got := column(rows, "error"); !slices.Equal(got, []string{"recent failure", "old failure"}) {
				t.Fatalf("failed errors %v", got)
			}
		})

		t.Run("failed_last_hour", func(t *testing.T) {
			rows := run("failed_last_hour")
			if got, want := column(rows, "id"), []string{f.failedRecent.String()}; !slices.Equal(got, want) {
				t.Fatalf("failed in the last hour %v, want %v", got, want)
			}
			if r := rows[0]; fmt.Sprint(r["error"]) != "recent failure" || asInt(t, r["attempt"]) != 1 || fmt.Sprint(r["app"]) != "app" {
				t.Fatalf("failed in the last hour row %v", r)
			}
		})

		t.Run("stuck_running", func(t *testing.T) {
			// The default zombie timeout, 60 s: the job last pinged 5 min
			// ago is stuck, the one claimed now is not.
			if got, want := column(run("stuck_running"), "id"), []string{f.stale.String()}; !slices.Equal(got, want) {
				t.Fatalf("stuck with a 60 s zombie timeout: %v, want %v", got, want)
			}
			// The query reads the timeout the server recorded.
			if err := s.SetZombieTimeout(t.Context(), 10*time.Minute); err != nil {
				t.Fatalf("set zombie timeout: %v", err)
			}
			if got := run("stuck_running"); len(got) != 0 {
				t.Fatalf("stuck with a 10 min zombie timeout: %v, want none", got)
			}
			if err := s.SetZombieTimeout(t.Context(), 2*time.Minute); err != nil {
				t.Fatalf("set zombie timeout: %v", err)
			}
			rows := run("stuck_running")
			if got, want := column(rows, "id"), []string{f.stale.String()}; !slices.Equal(got, want) {
				t.Fatalf("stuck with a 2 min zombie timeout: %v, want %v", got, want)
			}
			if fmt.Sprint(rows[0]["worker"]) != "w1" || rows[0]["last_ping"] == nil {
				t.Fatalf("stuck row %v, want worker w1 and its last ping", rows[0])
			}
		})

		t.Run("oldest_waiting", func(t *testing.T) {
			rows := run("oldest_waiting")
			// Longest wait first: a (20 min; not its job due 5 min ago),
			// b (1 min; not its job due in an hour), retry (due about a
			// second after its failure a minute ago), r (requeued now).
			want := []struct {
				tag  string
				id   uuid.UUID
				wait int64
			}{{"a", f.waitA, 20 * 60}, {"b", f.waitB, 60}, {"retry", f.failedRetry, 59}, {"r", f.reaped, 0}}
			if len(rows) != len(want) {
				t.Fatalf("oldest waiting rows %v, want one per tag %v", rows, want)
			}
			slack := int64(time.Since(now)/time.Second) + 2
			for i, w := range want {
				r := rows[i]
				if fmt.Sprint(r["tag"]) != w.tag || fmt.Sprint(r["id"]) != w.id.String() {
					t.Fatalf("oldest waiting row %d is %v, want tag %s job %s", i, r, w.tag, w.id)
				}
				if got := asInt(t, r["waiting_seconds"]); got < w.wait-2 || got > w.wait+slack {
					t.Errorf("tag %s waits %d s, want about %d", w.tag, got, w.wait)
				}
			}
		})
	})
}
