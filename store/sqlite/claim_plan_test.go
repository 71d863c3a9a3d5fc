package sqlite

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// The claim's plan must not depend on statistics: after ANALYZE on a
// populated database (deep waiting queues on two tags, running rows, and
// finished jobs) the claim still searches the claim index by tag, in its
// order, and never scans or sorts job_queue whole.
func TestClaimPlanSurvivesAnalyze(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	now := time.Now()
	enqueueN(t, s, "default", 3000, now)
	enqueueN(t, s, "other", 3000, now)
	jobs, err := s.Executor().Claim(ctx, spine.ClaimParams{Worker: "w", Tags: []string{"default"}, Limit: 500, Now: now})
	if err != nil || len(jobs) != 500 {
		t.Fatalf("claim 500: %d jobs, %v", len(jobs), err)
	}
	for _, j := range jobs[:250] {
		if _, err := s.Executor().Complete(ctx, driver.Completion{Lease: spine.Lease{JobID: j.ID, ClaimToken: j.ClaimToken}, Status: spine.StatusSuccess, Now: now}); err != nil {
			t.Fatalf("complete: %v", err)
		}
	}
	if _, err := s.DB().ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatalf("analyze: %v", err)
	}
	if n := count(t, s, "SELECT count(*) FROM sqlite_stat1 WHERE idx = 'job_queue_claim'"); n == 0 {
		t.Fatal("ANALYZE wrote no statistics for the claim index")
	}
	plan := claimPlan(t, s)
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, "INDEX job_queue_claim (tag=?") {
		t.Fatalf("after ANALYZE the claim plan does not search the claim index by tag:\n%s", text)
	}
	if slices.ContainsFunc(plan, func(l string) bool {
		return strings.HasPrefix(l, "SCAN c") || strings.HasPrefix(l, "SCAN q") ||
			strings.Contains(l, "job_queue AS c USING") && !strings.Contains(l, "job_queue_claim")
	}) {
		t.Fatalf("after ANALYZE the claim plan scans job_queue or uses another index:\n%s", text)
	}
	got, err := s.Executor().Claim(ctx, spine.ClaimParams{Worker: "w", Tags: []string{"default", "other"}, Limit: 10, Now: now})
	if err != nil || len(got) != 10 {
		t.Fatalf("claim after ANALYZE: %d jobs, %v", len(got), err)
	}
}

// claimPlan is the EXPLAIN QUERY PLAN of claim.sql, one detail per line.
func claimPlan(t *testing.T, s *Driver) []string {
	t.Helper()
	rows, err := s.DB().Query("EXPLAIN QUERY PLAN "+sqlOf(qClaim),
		sql.Named("tags", `["default","other"]`), sql.Named("limit", 5),
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
	return plan
}
