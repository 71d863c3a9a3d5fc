package sqlite

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/spine/storetest"
	"github.com/windforce/windforce/store/migrate"
)

// Twenty enqueues and a batch of twenty of an action with 1 MiB schemas
// store each schema once (issue 13): the file does not grow by a copy per
// job, and every job reads back exactly the bytes it pinned.
func TestLargeSchemaStoredOnce(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	p := job("default")
	p.Pin.InputSchema = storetest.LargeSchema("input", 1<<20, "name")
	p.Pin.OutputSchema = storetest.LargeSchema("output", 1<<20, "greeting")
	before := usedBytes(t, s)
	var ids []spine.EnqueueResult
	for range 20 {
		ids = append(ids, enqueue(t, s, p))
	}
	batch, err := s.EnqueueBatch(ctx, slices.Repeat([]spine.EnqueueParams{p}, 20))
	if err != nil {
		t.Fatalf("enqueue batch: %v", err)
	}
	ids = append(ids, batch...)

	schemas := int64(len(p.Pin.InputSchema) + len(p.Pin.OutputSchema))
	if grown := usedBytes(t, s) - before; grown > schemas+1<<20 {
		t.Fatalf("40 jobs with %d bytes of schemas grew the file by %d bytes: a copy per job", schemas, grown)
	}
	if n := count(t, s, "SELECT count(*) FROM job_schema"); n != 2 {
		t.Fatalf("job_schema has %d rows, want 2 (one input, one output schema)", n)
	}
	// The first and last of each kind: reading all forty is slow under -race.
	for _, id := range []spine.EnqueueResult{ids[0], ids[19], ids[20], ids[39]} {
		j, err := s.GetJob(ctx, "ws", id.ID)
		if err != nil {
			t.Fatalf("get job: %v", err)
		}
		if !bytes.Equal(j.Pin.InputSchema, p.Pin.InputSchema) || !bytes.Equal(j.Pin.OutputSchema, p.Pin.OutputSchema) {
			t.Fatalf("job %s reads back other schemas than it pinned", id.ID)
		}
	}
	jobs, err := s.Claim(ctx, spine.ClaimParams{Worker: "w", Tags: []string{"default"}, Limit: 1})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %v (%d jobs)", err, len(jobs))
	}
	if !bytes.Equal(jobs[0].Pin.OutputSchema, p.Pin.OutputSchema) {
		t.Fatal("the claim's output schema is not the one pinned")
	}
}

// The sweep deletes a schema no job can reference once it is a day past
// its last pin, keeps one an old job still pins, and an enqueue after
// the delete stores the schema again.
func TestSweepDeletesUnpinnedSchemas(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	now := time.Now()
	gone, kept := job("default"), job("waits")
	gone.Pin.InputSchema = json.RawMessage(`{"title":"gone"}`)
	kept.Pin.InputSchema = json.RawMessage(`{"title":"kept"}`)
	kept.Now = now.Add(-72 * time.Hour)
	enqueue(t, s, gone)
	waiting := enqueue(t, s, kept)
	jobs, err := s.Claim(ctx, spine.ClaimParams{Worker: "w", Tags: []string{"default"}, Limit: 1, Now: time.Now()})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %v (%d jobs)", err, len(jobs))
	}
	lease := spine.Lease{JobID: jobs[0].ID, ClaimToken: jobs[0].ClaimToken}
	if _, err := s.Complete(ctx, spine.CompleteParams{Lease: lease, Result: json.RawMessage(`{}`), Now: now}); err != nil {
		t.Fatalf("complete: %v", err)
	}

	sweep(t, s, now)
	if n := count(t, s, "SELECT count(*) FROM job_schema"); n != 2 {
		t.Fatalf("job_schema has %d rows after a sweep, want 2: a schema pinned just now stays", n)
	}
	// As if the last pins were long ago: the waiting job's schema as old
	// as that job (every job is created before used_at + schemaTouch).
	setUsedAt(t, s, gone.Pin.InputSchema, now.Add(-96*time.Hour))
	setUsedAt(t, s, kept.Pin.InputSchema, kept.Now)
	sweep(t, s, now)
	if n := count(t, s, "SELECT count(*) FROM job_schema"); n != 1 {
		t.Fatalf("job_schema has %d rows, want 1: the unreferenced schema is deleted, the pinned one kept", n)
	}
	if j, err := s.GetJob(ctx, "ws", waiting.ID); err != nil || string(j.Pin.InputSchema) != `{"title":"kept"}` {
		t.Fatalf("the waiting job after the sweep: schema %s, %v", j.Pin.InputSchema, err)
	}
	again := enqueue(t, s, gone)
	if j, err := s.GetJob(ctx, "ws", again.ID); err != nil || string(j.Pin.InputSchema) != `{"title":"gone"}` {
		t.Fatalf("a job enqueued after the delete: schema %s, %v", j.Pin.InputSchema, err)
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
	recent := time.Now().Add(-schemaTouch / 2)
	setUsedAt(t, s, p.Pin.InputSchema, recent)
	enqueue(t, s, p)
	if got := usedAt(t, s, p.Pin.InputSchema); got != micros(recent) {
		t.Fatalf("used_at %d after an enqueue within the touch period, want %d kept", got, micros(recent))
	}
	setUsedAt(t, s, p.Pin.InputSchema, time.Now().Add(-2*schemaTouch))
	before := time.Now()
	if _, err := s.EnqueueBatch(context.Background(), []spine.EnqueueParams{p, p}); err != nil {
		t.Fatalf("enqueue batch: %v", err)
	}
	if got := usedAt(t, s, p.Pin.InputSchema); got < micros(before) {
		t.Fatalf("used_at %d after an enqueue of a stale schema, want at least %d", got, micros(before))
	}
}

// Migration 0010 moves existing jobs' schemas into job_schema, once per
// text, hashing them with windforce_sha256, and the jobs read back what
// they pinned; a new job pinning the same text shares the migrated row.
func TestMigrateMovesPinnedSchemas(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	ctx := context.Background()
	migrateBefore(t, s, "job_schema")
	shared, other := `{"type":"object","required":["name"]}`, `{"type": "string"}`
	rows := []struct{ in, out *string }{{&shared, &other}, {&shared, nil}, {nil, nil}, {&other, &shared}}
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = uuid.Must(uuid.NewV7())
		_, err := s.DB().ExecContext(ctx, `
			INSERT INTO job (id, workspace, trigger_kind, created_at, input, app_key, action_key,
			                 input_schema, output_schema, tag, max_attempts, backoff_ms, backoff_factor)
			VALUES (?1, 'ws', 'api', ?2, '{}', 'app', 'act', ?3, ?4, 'default', 1, 1000, 2.0)`,
			ids[i].String(), micros(time.Now()), r.in, r.out)
		if err == nil {
			_, err = s.DB().ExecContext(ctx, `
				INSERT INTO job_queue (job_id, workspace, app_key, action_key, tag, scheduled_for)
				VALUES (?1, 'ws', 'app', 'act', 'default', ?2)`, ids[i].String(), micros(time.Now()))
		}
		if err != nil {
			t.Fatalf("insert a job before the migration: %v", err)
		}
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if n := count(t, s, "SELECT count(*) FROM job_schema"); n != 2 {
		t.Fatalf("job_schema has %d rows after the migration, want 2", n)
	}
	if n := count(t, s, "SELECT count(*) FROM pragma_table_info('job') WHERE name IN ('input_schema', 'output_schema')"); n != 0 {
		t.Fatalf("job keeps %d per-job schema columns", n)
	}
	for i, r := range rows {
		j, err := s.GetJob(ctx, "ws", ids[i])
		if err != nil {
			t.Fatalf("get job %d: %v", i, err)
		}
		requireSchema(t, "input", j.Pin.InputSchema, r.in)
		requireSchema(t, "output", j.Pin.OutputSchema, r.out)
	}
	p := job("default")
	p.Pin.InputSchema = json.RawMessage(other)
	enqueue(t, s, p)
	if n := count(t, s, "SELECT count(*) FROM job_schema"); n != 2 {
		t.Fatalf("job_schema has %d rows after a new job pinned a migrated schema, want 2", n)
	}
}

// requireSchema requires a read-back schema to be exactly want (nil for
// none).
func requireSchema(t *testing.T, what string, got json.RawMessage, want *string) {
	t.Helper()
	if (want == nil) != (got == nil) || (want != nil && string(got) != *want) {
		t.Fatalf("%s schema %s, want %v", what, got, want)
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
	ctx := context.Background()
	err = s.write(ctx, func(w *writeTx) error {
		if _, err := w.tx.ExecContext(ctx, sqlOf(qMigrateTable)); err != nil {
			return err
		}
		for _, m := range ms[:n] {
			if err := apply(ctx, w.tx, m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("migrate before %s: %v", name, err)
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
	res, err := s.DB().ExecContext(context.Background(), "UPDATE job_schema SET used_at = ? WHERE hash = ?",
		micros(at), schemaHash(schema))
	if err != nil {
		t.Fatalf("set used_at of %s: %v", schema, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("set used_at of %s: %d rows", schema, n)
	}
}

func usedAt(t *testing.T, s *Driver, schema json.RawMessage) int64 {
	t.Helper()
	var at int64
	err := s.DB().QueryRowContext(context.Background(), "SELECT used_at FROM job_schema WHERE hash = ?", schemaHash(schema)).Scan(&at)
	if err != nil {
		t.Fatalf("read used_at of %s: %v", schema, err)
	}
	return at
}

// usedBytes is the pages the database uses (free pages excluded).
func usedBytes(t *testing.T, s *Driver) int64 {
	t.Helper()
	return int64(count(t, s, "SELECT (page_count - freelist_count) * page_size FROM pragma_page_count, pragma_freelist_count, pragma_page_size"))
}
