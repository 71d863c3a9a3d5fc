package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
)

// Impossible states are refused by the schema itself (invariant 9), not
// only by the store's code.
func TestSchemaRefusesImpossibleStates(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	const queueCols = `INSERT INTO job_queue (job_id, workspace, app_key, action_key, tag, scheduled_for, running, worker, claim_token, started_at, canceled_by, coalesce_key) VALUES `
	const doneCols = `INSERT INTO job_completed (job_id, workspace, tag, status, error, completed_at, attempt, restarts, canceled_by) VALUES `
	for name, stmt := range map[string]string{
		"running without claim_token": queueCols + `('a', 'ws', 'app', 'act', 't', 1, 1, 'w', NULL, 1, NULL, NULL)`,
		"running without worker":      queueCols + `('a', 'ws', 'app', 'act', 't', 1, 1, NULL, 'tok', 1, NULL, NULL)`,
		"running without started_at":  queueCols + `('a', 'ws', 'app', 'act', 't', 1, 1, 'w', 'tok', NULL, NULL, NULL)`,
		"waiting with an owner":       queueCols + `('a', 'ws', 'app', 'act', 't', 1, 0, 'w', 'tok', 1, NULL, NULL)`,
		"waiting with a cancel mark":  queueCols + `('a', 'ws', 'app', 'act', 't', 1, 0, NULL, NULL, NULL, 'op', NULL)`,
		"running with a coalesce key": queueCols + `('a', 'ws', 'app', 'act', 't', 1, 1, 'w', 'tok', 1, NULL, 'k')`,
		"running = 2":                 queueCols + `('a', 'ws', 'app', 'act', 't', 1, 2, 'w', 'tok', 1, NULL, NULL)`,
		"timestamp as text":           queueCols + `('a', 'ws', 'app', 'act', 't', 'yesterday', 0, NULL, NULL, NULL, NULL, NULL)`,
		"unknown status":              doneCols + `('a', 'ws', 't', 'lost', NULL, 1, 1, 0, NULL)`,
		"failure without error":       doneCols + `('a', 'ws', 't', 'failure', NULL, 1, 1, 0, NULL)`,
		"canceled without by":         doneCols + `('a', 'ws', 't', 'canceled', NULL, 1, 1, 0, NULL)`,
		"error that is not JSON":      doneCols + `('a', 'ws', 't', 'failure', '{oops', 1, 1, 0, NULL)`,
	} {
		if _, err := s.DB().ExecContext(context.Background(), stmt); err == nil {
			t.Errorf("%s: accepted, want refused", name)
		} else if !strings.Contains(err.Error(), "constraint") && !strings.Contains(err.Error(), "cannot store") {
			t.Errorf("%s: refused with %v, want a constraint error", name, err)
		}
	}
}

// The coalesce index allows one waiting job per key.
func TestSchemaOneWaitingPerCoalesceKey(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	const ins = `INSERT INTO job_queue (job_id, workspace, app_key, action_key, tag, scheduled_for, coalesce_key) VALUES (?, 'ws', 'app', 'act', 't', 1, 'k')`
	if _, err := s.DB().Exec(ins, "a"); err != nil {
		t.Fatalf("first waiting row: %v", err)
	}
	_, err := s.DB().Exec(ins, "b")
	if err == nil {
		t.Fatal("second waiting row with the same coalesce key accepted")
	}
	if !errors.Is(translate(err), spine.ErrConflict) {
		t.Fatalf("duplicate coalesce key translates to %v, want ErrConflict", translate(err))
	}
}

// The claim walks the partial claim index (tag first, waiting rows only);
// it never scans job_queue whole nor sorts every waiting row. The store
// never runs ANALYZE (statistics taken when the queue happens to be small
// would make the planner scan it once it is deep), so this is the plan it
// runs with.
func TestClaimUsesClaimIndex(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	enqueueN(t, s, "default", 50, time.Now())
	rows, err := s.DB().Query("EXPLAIN QUERY PLAN "+sqlOf(qClaim),
		sql.Named("tags", `["default"]`), sql.Named("limit", 5),
		sql.Named("now", micros(time.Now())), sql.Named("worker", "w"))
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	plan, err := collect(rows, func(rows *sql.Rows) (string, error) {
		var id, parent, unused int
		var detail string
		return detail, rows.Scan(&id, &parent, &unused, &detail)
	})
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, "INDEX job_queue_claim (tag=?)") {
		t.Fatalf("claim plan does not search the claim index by tag:\n%s", text)
	}
	if slices.ContainsFunc(plan, func(l string) bool { return strings.HasPrefix(l, "SCAN c") || strings.HasPrefix(l, "SCAN q") }) {
		t.Fatalf("claim plan scans job_queue:\n%s", text)
	}
}

// The queue_health view has the Postgres view's columns, in order.
func TestHealthViewColumns(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	rows, err := s.DB().Query("SELECT * FROM queue_health")
	if err != nil {
		t.Fatalf("select: %v", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatalf("columns: %v", err)
	}
	want := []string{"workspace", "tag", "waiting", "scheduled", "running", "failed_24h",
		"expired_heartbeats", "oldest_waiting_seconds", "max_attempt", "max_restarts"}
	if !slices.Equal(cols, want) {
		t.Fatalf("queue_health columns %v, want %v", cols, want)
	}
}
