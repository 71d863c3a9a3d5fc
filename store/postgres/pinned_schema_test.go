package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/spine/storetest"
	"github.com/windforce/windforce/store/migrate"
)

// largeSchemaJob is job on tag with 1 MiB input and output schemas.
func largeSchemaJob(tag string) spine.EnqueueParams {
	p := job(tag)
	p.Pin.InputSchema = storetest.LargeSchema("input", 1<<20, "name")
	p.Pin.OutputSchema = storetest.LargeSchema("output", 1<<20, "greeting")
	return p
}

// Twenty enqueues and a batch of twenty of an action with 1 MiB schemas
// store each schema once (issue 13): the job table does not grow by a
// copy per job, and every job reads back the schemas' text as jsonb gives
// it, as before.
func TestLargeSchemaStoredOnce(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	p := largeSchemaJob("default")
	var ids []spine.EnqueueResult
	for range 20 {
		ids = append(ids, enqueue(t, s, p))
	}
	batch, err := s.EnqueueBatch(ctx, slices.Repeat([]spine.EnqueueParams{p}, 20))
	if err != nil {
		t.Fatalf("enqueue batch: %v", err)
	}
	ids = append(ids, batch...)

	if n := queryInt(t, s, "SELECT pg_total_relation_size('job')"); n > 1<<20 {
		t.Fatalf("job table holds %d bytes after 40 jobs: a schema copy per job", n)
	}
	if n := queryInt(t, s, "SELECT count(*) FROM job_schema"); n != 2 {
		t.Fatalf("job_schema has %d rows, want 2 (one input, one output schema)", n)
	}
	in, out := jsonbText(t, s, p.Pin.InputSchema), jsonbText(t, s, p.Pin.OutputSchema)
	// The first and last of each kind: reading all forty is slow under -race.
	for _, id := range []spine.EnqueueResult{ids[0], ids[19], ids[20], ids[39]} {
		j := getJob(t, s, id)
		if !bytes.Equal(j.Pin.InputSchema, in) || !bytes.Equal(j.Pin.OutputSchema, out) {
			t.Fatalf("job %s reads back other schemas than it pinned", id.ID)
		}
	}
	c := claimOne(t, s, "default", claimNow())
	if !bytes.Equal(c.Pin.OutputSchema, out) {
		t.Fatal("the claim's output schema is not the one pinned")
	}
}

// The sweep deletes a schema no job can reference once it is a day past
// its last pin, keeps one an old job still pins, and an enqueue after
// the delete stores the schema again.
func TestSweepDeletesUnpinnedSchemas(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	now := time.Now()
	gone, kept := job("default"), job("waits")
	gone.Pin.InputSchema = json.RawMessage(`{"title":"gone"}`)
	kept.Pin.InputSchema = json.RawMessage(`{"title":"kept"}`)
	kept.Now = now.Add(-72 * time.Hour)
	enqueue(t, s, gone)
	waiting := enqueue(t, s, kept)
	finish(t, s, "default", now)

	sweep(t, s, now)
	if n := queryInt(t, s, "SELECT count(*) FROM job_schema"); n != 2 {
		t.Fatalf("job_schema has %d rows after a sweep, want 2: a schema pinned just now stays", n)
	}
	// As if the last pins were long ago: the waiting job's schema as old
	// as that job (every job is created before used_at + schemaTouch).
	setUsedAt(t, s, gone.Pin.InputSchema, now.Add(-96*time.Hour))
	setUsedAt(t, s, kept.Pin.InputSchema, kept.Now)
	sweep(t, s, now)
	if n := queryInt(t, s, "SELECT count(*) FROM job_schema"); n != 1 {
		t.Fatalf("job_schema has %d rows, want 1: the unreferenced schema is deleted, the pinned one kept", n)
	}
	if j := getJob(t, s, waiting); string(j.Pin.InputSchema) != `{"title":"kept"}` {
		t.Fatalf("the waiting job's schema after the sweep: %s", j.Pin.InputSchema)
	}
	again := enqueue(t, s, gone)
	if j := getJob(t, s, again); string(j.Pin.InputSchema) != `{"title":"gone"}` {
		t.Fatalf("a job enqueued after the delete has schema %s", j.Pin.InputSchema)
	}
}

// An enqueue writes a stored schema's used_at only when it is older than
// schemaTouch, so a busy action does not write its schema row per job.
func TestEnqueueTouchesStaleSchemaOnly(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	p := job("default")
	p.Pin.InputSchema = json.RawMessage(`{"title":"touch"}`)
	enqueue(t, s, p)
	recent := time.Now().Add(-schemaTouch / 2).Truncate(time.Microsecond)
	setUsedAt(t, s, p.Pin.InputSchema, recent)
	enqueue(t, s, p)
	if got := usedAt(t, s, p.Pin.InputSchema); !got.Equal(recent) {
		t.Fatalf("used_at %v after an enqueue within the touch period, want %v kept", got, recent)
	}
	setUsedAt(t, s, p.Pin.InputSchema, time.Now().Add(-2*schemaTouch))
	before := time.Now().Add(-time.Minute)
	if _, err := s.EnqueueBatch(context.Background(), []spine.EnqueueParams{p, p}); err != nil {
		t.Fatalf("enqueue batch: %v", err)
	}
	if got := usedAt(t, s, p.Pin.InputSchema); got.Before(before) {
		t.Fatalf("used_at %v after an enqueue of a stale schema, want now", got)
	}
}

// Migration 0010 moves existing jobs' schemas into job_schema, once per
// text, and the jobs read back what they pinned; a new job pinning the same
// text (as the catalog's jsonb gives it) shares the migrated row.
func TestMigrateMovesPinnedSchemas(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	ctx := context.Background()
	migrateBefore(t, s, "job_schema")
	shared, other := `{"type":"object","required":["name"]}`, `{"type":"string"}`
	rows := []struct{ in, out *string }{{&shared, &other}, {&shared, nil}, {nil, nil}, {&other, &shared}}
	var ids []string
	for _, r := range rows {
		var id string
		err := s.pool.QueryRow(ctx, `
			WITH j AS (
				INSERT INTO job (id, workspace, trigger_kind, created_at, input, app_key, action_key,
				                 input_schema, output_schema, tag, max_attempts, backoff_ms, backoff_factor)
				VALUES (gen_random_uuid(), 'ws', 'api', now(), '{}', 'app', 'act', $1::jsonb, $2::jsonb, 'default', 1, 1000, 2)
				RETURNING id, workspace, app_key, action_key, tag
			)
			INSERT INTO job_queue (job_id, workspace, app_key, action_key, tag, scheduled_for)
			SELECT id, workspace, app_key, action_key, tag, now() FROM j
			RETURNING job_id::text`, r.in, r.out).Scan(&id)
		if err != nil {
			t.Fatalf("insert a job before the migration: %v", err)
		}
		ids = append(ids, id)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if n := queryInt(t, s, "SELECT count(*) FROM job_schema"); n != 2 {
		t.Fatalf("job_schema has %d rows after the migration, want 2", n)
	}
	if n := queryInt(t, s, "SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() AND column_name IN ('input_schema', 'output_schema') AND table_name = 'job'"); n != 0 {
		t.Fatalf("job keeps %d per-job schema columns", n)
	}
	for i, r := range rows {
		j, err := s.GetJob(ctx, "ws", uuid.MustParse(ids[i]))
		if err != nil {
			t.Fatalf("get job %d: %v", i, err)
		}
		requireSchema(t, s, "input", j.Pin.InputSchema, r.in)
		requireSchema(t, s, "output", j.Pin.OutputSchema, r.out)
	}
	p := job("default")
	p.Pin.InputSchema = json.RawMessage(jsonbRaw(t, s, shared))
	enqueue(t, s, p)
	if n := queryInt(t, s, "SELECT count(*) FROM job_schema"); n != 2 {
		t.Fatalf("job_schema has %d rows after a new job pinned a migrated schema, want 2", n)
	}
}

// requireSchema requires a read-back schema to be want as jsonb gives it
// (nil for none).
func requireSchema(t *testing.T, s *Driver, what string, got json.RawMessage, want *string) {
	t.Helper()
	if want == nil {
		if got != nil {
			t.Fatalf("%s schema %s, want none", what, got)
		}
		return
	}
	if w := jsonbText(t, s, json.RawMessage(*want)); !bytes.Equal(got, w) {
		t.Fatalf("%s schema %s, want %s", what, got, w)
	}
}

// migrateBefore applies the migrations before the one named name.
func migrateBefore(t *testing.T, s *Driver, name string) {
	t.Helper()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	n := slices.IndexFunc(ms, func(m migrate.Migration) bool { return m.Name == name })
	if n < 0 {
		t.Fatalf("no migration named %s", name)
	}
	err = s.inTx(context.Background(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(context.Background(), qMigrateInit); err != nil {
			return err
		}
		for _, m := range ms[:n] {
			if err := apply(context.Background(), tx, m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("migrate before %s: %v", name, err)
	}
}

// finish claims and completes the one job on tag, completing it at now.
func finish(t *testing.T, s *Driver, tag string, now time.Time) {
	t.Helper()
	c := claimOne(t, s, tag, claimNow())
	if _, err := s.Complete(context.Background(), spine.CompleteParams{Lease: lease(c), Result: json.RawMessage(`{}`), Now: now}); err != nil {
		t.Fatalf("complete: %v", err)
	}
}

// sweep sweeps every job finished before now plus a minute.
func sweep(t *testing.T, s *Driver, now time.Time) {
	t.Helper()
	ex := s.Executor()
	if _, err := ex.Sweep(context.Background(), now.Add(time.Minute), 1000); err != nil {
		t.Fatalf("sweep: %v", err)
	}
	if err := ex.SweepSchemas(context.Background()); err != nil {
		t.Fatalf("sweep schemas: %v", err)
	}
}

func setUsedAt(t *testing.T, s *Driver, schema json.RawMessage, at time.Time) {
	t.Helper()
	tag, err := s.pool.Exec(context.Background(), "UPDATE job_schema SET used_at = $1 WHERE hash = $2", at, *schemaHash(schema))
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("set used_at of %s: %v (%d rows)", schema, err, tag.RowsAffected())
	}
}

func usedAt(t *testing.T, s *Driver, schema json.RawMessage) time.Time {
	t.Helper()
	var at time.Time
	if err := s.pool.QueryRow(context.Background(), "SELECT used_at FROM job_schema WHERE hash = $1", *schemaHash(schema)).Scan(&at); err != nil {
		t.Fatalf("read used_at of %s: %v", schema, err)
	}
	return at
}

func queryInt(t *testing.T, s *Driver, query string) int64 {
	t.Helper()
	var n int64
	if err := s.pool.QueryRow(context.Background(), query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// jsonbRaw is text as a jsonb column gives it back.
func jsonbRaw(t *testing.T, s *Driver, text string) string {
	t.Helper()
	var out string
	if err := s.pool.QueryRow(context.Background(), "SELECT $1::jsonb::text", text).Scan(&out); err != nil {
		t.Fatalf("jsonb of %s: %v", text, err)
	}
	return out
}

// jsonbText is v as a job's pin read it back before schemas were shared:
// its jsonb text, compacted.
func jsonbText(t *testing.T, s *Driver, v json.RawMessage) json.RawMessage {
	t.Helper()
	return compactJSON([]byte(jsonbRaw(t, s, string(v))))
}
