package postgres

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The claim reads job_queue through the partial claim index, tag first,
// even with other tags and running rows around (invariant 9, Windmill's
// stranded jobs).
func TestClaimPlanUsesClaimIndex(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	_, err := s.pool.Exec(ctx, `
		INSERT INTO job_queue (job_id, workspace, app_key, action_key, tag, priority, scheduled_for)
		SELECT gen_random_uuid(), 'ws', 'a', 'b', 'tag' || (i % 20), i % 3, now() - i * interval '1 second'
		FROM generate_series(1, 20000) AS i;
		ANALYZE job_queue`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tags := range [][]string{{"tag1"}, {"tag1", "tag2", "nobody"}} {
		plan := explain(t, s, qClaim, namedArgs{"tags": tags, "limit": 10, "now": nil, "worker": "w", "offer_ms": 3000, "capacity": 10})
		if !strings.Contains(plan, "job_queue_claim") {
			t.Errorf("claim on %v does not use job_queue_claim:\n%s", tags, plan)
		}
		if strings.Contains(plan, "Seq Scan on job_queue") {
			t.Errorf("claim on %v scans job_queue:\n%s", tags, plan)
		}
	}
}

// explain returns the plan of a query with its named arguments, run
// inside a rolled-back transaction (EXPLAIN ANALYZE would execute it).
func explain(t *testing.T, s *Driver, query string, args namedArgs) string {
	t.Helper()
	ctx := context.Background()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	return planOf(t, tx, "EXPLAIN "+query, args)
}

// planOf runs an EXPLAIN statement in tx and returns the plan's lines.
func planOf(t *testing.T, tx pgx.Tx, explain string, args ...any) string {
	t.Helper()
	rows, err := tx.Query(context.Background(), explain, args...)
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	return strings.Join(lines, "\n")
}

// Completion and heartbeat lock each lease's row through a primary-key
// probe, never a scan of job_queue, even when the planner believes the
// queue is tiny (a fresh schema, never analyzed: the state in which a
// worker starting on an empty queue caches its prepared plans for the
// connection's life).
func TestLeaseLocksProbeByKey(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	const n = 500
	ids, tokens := make([]uuid.UUID, n), make([]uuid.UUID, n)
	results, nows := make([]*string, n), make([]*string, n)
	for i := range ids {
		ids[i], tokens[i] = uuid.New(), uuid.New()
	}
	for name, q := range map[string]struct {
		sql  string
		args namedArgs
	}{
		"complete batch": {qCompleteBatch, namedArgs{"job_ids": ids, "claim_tokens": tokens, "results": results, "nows": nows, "tails": make([]string, n), "done_channel": s.doneChannel}},
		"heartbeat":      {qHeartbeat, namedArgs{"job_ids": ids, "claim_tokens": tokens, "now": nil}},
	} {
		plan := explain(t, s, q.sql, q.args)
		if under := planBelow(plan, "LockRows"); !strings.Contains(under, "Index Scan using job_queue_pkey on job_queue") {
			t.Errorf("%s locks rows found by %q, not by a job_queue_pkey probe:\n%s", name, under, plan)
		}
	}
}

// planBelow returns the plan line right below the first node named node.
func planBelow(plan, node string) string {
	lines := strings.Split(plan, "\n")
	for i, l := range lines {
		if strings.Contains(l, "->  "+node) && i+1 < len(lines) {
			return strings.TrimSpace(lines[i+1])
		}
	}
	return ""
}

// The claim's plan as a worker caches it on a fresh, never-analyzed queue
// (a generic plan: pgx prepares each statement) reads the claim index by
// tag and updates the picked rows through the primary key. It once updated
// them through a job_id condition on job_queue_claim, reading the whole
// index per picked job.
func TestClaimGenericPlan(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	plan := explainGeneric(t, s, qClaim, map[string]string{
		"tags": "text[]", "limit": "int", "now": "timestamptz", "worker": "text", "offer_ms": "bigint", "capacity": "int",
	})
	if !strings.Contains(plan, "Index Scan using job_queue_pkey on job_queue") {
		t.Errorf("claim does not update the picked rows through the primary key:\n%s", plan)
	}
	if strings.Count(plan, "job_queue_claim") != 1 || strings.Contains(plan, "Seq Scan on job_queue") {
		t.Errorf("claim reads job_queue other than by one ordered scan of job_queue_claim:\n%s", plan)
	}
}

// explainGeneric returns the generic plan of a query with named arguments
// of the given types: the plan a connection caches after a few runs of a
// prepared statement.
func explainGeneric(t *testing.T, s *Driver, query string, types map[string]string) string {
	t.Helper()
	ctx := context.Background()
	var order []string
	sql := regexp.MustCompile(`@(\w+)`).ReplaceAllStringFunc(query, func(m string) string {
		name := m[1:]
		i := slices.Index(order, name)
		if i < 0 {
			order = append(order, name)
			i = len(order) - 1
		}
		return fmt.Sprintf("$%d", i+1)
	})
	decl, nulls := make([]string, len(order)), make([]string, len(order))
	for i, name := range order {
		decl[i], nulls[i] = types[name], "NULL"
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	// PREPARE outlives the transaction: deallocate, or the next call on
	// this connection finds the name taken.
	for _, stmt := range []string{
		"SET LOCAL plan_cache_mode = force_generic_plan",
		fmt.Sprintf("PREPARE generic_plan (%s) AS %s", strings.Join(decl, ", "), sql),
	} {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt[:30], err)
		}
	}
	defer tx.Exec(ctx, "DEALLOCATE generic_plan") //nolint:errcheck
	return planOf(t, tx, fmt.Sprintf("EXPLAIN EXECUTE generic_plan (%s)", strings.Join(nulls, ", ")))
}

// Batch completion and heartbeat as a worker caches them on a fresh,
// never-analyzed queue: every row reached by key, no hash join over a scan
// of job_queue or job_runtime (once seen in the benchmark: each batch read
// the whole queue).
func TestLeaseGenericPlans(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	for name, q := range map[string]struct {
		sql   string
		types map[string]string
	}{
		"complete batch": {qCompleteBatch, map[string]string{
			"job_ids": "uuid[]", "claim_tokens": "uuid[]", "results": "text[]", "nows": "timestamptz[]", "tails": "text[]", "done_channel": "text",
		}},
		"heartbeat": {qHeartbeat, map[string]string{"job_ids": "uuid[]", "claim_tokens": "uuid[]", "now": "timestamptz"}},
	} {
		plan := explainGeneric(t, s, q.sql, q.types)
		if strings.Contains(plan, "Seq Scan") || strings.Contains(plan, "Hash Join") {
			t.Errorf("%s scans a table:\n%s", name, plan)
		}
	}
}

// A worker's claims run the generic plan from the first: left to choose,
// Postgres planned the claim afresh at every call (custom plans), which
// cost more than running it. One connection, so the prepared statement's
// counters are the claims'.
func TestClaimRunsItsGenericPlan(t *testing.T) {
	t.Parallel()
	s, _ := openStoreConns(t, 1)
	migrated(t, s)
	const claims = 8
	for range claims {
		enqueue(t, s, job("generic"))
		claimOne(t, s, "generic", time.Time{})
	}
	var generic, custom int64
	err := s.pool.QueryRow(context.Background(),
		`SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE '-- Claim takes up to%'`).
		Scan(&generic, &custom)
	if err != nil {
		t.Fatalf("read the claim's plan counters: %v", err)
	}
	if custom != 0 || generic != claims {
		t.Errorf("claim ran %d generic and %d custom plans, want %d generic and none custom", generic, custom, claims)
	}
}
