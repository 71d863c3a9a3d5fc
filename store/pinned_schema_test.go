package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/spine/storetest"
	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

// A job's pinned schemas are stored once per content in job_schema
// (migration 0010, issue 13). These tests run on both databases; what is
// one database's own (the migration moving old rows) stays in the
// driver's package.

// schemaTouch is the drivers' touch period: an enqueue moves a stored
// schema's used_at forward only when it is older than this.
const schemaTouch = time.Hour

// pinJob is a valid enqueue on tag.
func pinJob(tag string) spine.EnqueueParams {
	return spine.EnqueueParams{
		Workspace: "ws", TriggerKind: spine.TriggerAPI, Input: json.RawMessage(`{"n":1}`),
		Pin: spine.Pin{AppKey: "app", ActionKey: "act", Tag: tag, Timeout: time.Minute,
			Retry: spine.RetryPolicy{MaxAttempts: 2, Backoff: time.Second, Factor: 2}},
	}
}

// mustEnqueue enqueues p through the core or fails the test.
func mustEnqueue(t *testing.T, s *Store, p spine.EnqueueParams) spine.EnqueueResult {
	t.Helper()
	res, err := s.Enqueue(t.Context(), p)
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	return res
}

// mustGetJob reads job res of workspace ws or fails the test.
func mustGetJob(t *testing.T, s *Store, res spine.EnqueueResult) spine.Job {
	t.Helper()
	j, err := s.GetJob(t.Context(), "ws", res.ID)
	if err != nil {
		t.Fatalf("get job: %v", err)
	}
	return j
}

// Twenty enqueues and a batch of twenty of an action with 1 MiB schemas
// store each schema once (issue 13): the database does not grow by a
// copy per job, and every job reads back the schemas it pinned (on
// Postgres as jsonb gives the text, on SQLite byte for byte), as before.
func TestLargeSchemaStoredOnce(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		p := pinJob("default")
		p.Pin.InputSchema = storetest.LargeSchema("input", 1<<20, "name")
		p.Pin.OutputSchema = storetest.LargeSchema("output", 1<<20, "greeting")
		before := jobBytes(t, s)
		var ids []spine.EnqueueResult
		for range 20 {
			ids = append(ids, mustEnqueue(t, s, p))
		}
		batch, err := s.EnqueueBatch(ctx, slices.Repeat([]spine.EnqueueParams{p}, 20))
		if err != nil {
			t.Fatalf("enqueue batch: %v", err)
		}
		ids = append(ids, batch...)

		// On Postgres the job table alone (job_schema is apart); on SQLite
		// the whole file, so the two schemas once are allowed for.
		allowed := int64(1 << 20)
		if _, ok := s.Driver().(*sqlite.Driver); ok {
			allowed += int64(len(p.Pin.InputSchema) + len(p.Pin.OutputSchema))
		}
		if grown := jobBytes(t, s) - before; grown > allowed {
			t.Fatalf("40 jobs grew the job data by %d bytes (allowed %d): a schema copy per job", grown, allowed)
		}
		if n := sqlInt(t, s, "SELECT count(*) FROM job_schema"); n != 2 {
			t.Fatalf("job_schema has %d rows, want 2 (one input, one output schema)", n)
		}
		in, out := pinnedText(t, s, p.Pin.InputSchema), pinnedText(t, s, p.Pin.OutputSchema)
		// The first and last of each kind: reading all forty is slow under -race.
		for _, id := range []spine.EnqueueResult{ids[0], ids[19], ids[20], ids[39]} {
			j := mustGetJob(t, s, id)
			if !bytes.Equal(j.Pin.InputSchema, in) || !bytes.Equal(j.Pin.OutputSchema, out) {
				t.Fatalf("job %s reads back other schemas than it pinned", id.ID)
			}
		}
		jobs, err := s.Claim(ctx, spine.ClaimParams{Worker: "w", Tags: []string{"default"}, Limit: 1})
		if err != nil || len(jobs) != 1 {
			t.Fatalf("claim: %v (%d jobs)", err, len(jobs))
		}
		if !bytes.Equal(jobs[0].Pin.OutputSchema, out) {
			t.Fatal("the claim's output schema is not the one pinned")
		}
	})
}

// The sweep deletes a schema no job can reference once it is a day past
// its last pin, keeps one an old job still pins, and an enqueue after
// the delete stores the schema again.
func TestSweepDeletesUnpinnedSchemas(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		now := time.Now()
		gone, kept := pinJob("default"), pinJob("waits")
		gone.Pin.InputSchema = json.RawMessage(`{"title":"gone"}`)
		kept.Pin.InputSchema = json.RawMessage(`{"title":"kept"}`)
		kept.Now = now.Add(-72 * time.Hour)
		mustEnqueue(t, s, gone)
		waiting := mustEnqueue(t, s, kept)
		jobs, err := s.Claim(ctx, spine.ClaimParams{Worker: "w", Tags: []string{"default"}, Limit: 1})
		if err != nil || len(jobs) != 1 {
			t.Fatalf("claim: %v (%d jobs)", err, len(jobs))
		}
		lease := spine.Lease{JobID: jobs[0].ID, ClaimToken: jobs[0].ClaimToken}
		if _, err := s.Complete(ctx, spine.CompleteParams{Lease: lease, Result: json.RawMessage(`{}`), Now: now}); err != nil {
			t.Fatalf("complete: %v", err)
		}

		sweepBefore(t, s, now)
		if n := sqlInt(t, s, "SELECT count(*) FROM job_schema"); n != 2 {
			t.Fatalf("job_schema has %d rows after a sweep, want 2: a schema pinned just now stays", n)
		}
		// As if the last pins were long ago: the waiting job's schema as
		// old as that job (every job is created before used_at +
		// schemaTouch).
		setUsedAt(t, s, gone.Pin.InputSchema, now.Add(-96*time.Hour))
		setUsedAt(t, s, kept.Pin.InputSchema, kept.Now)
		sweepBefore(t, s, now)
		if n := sqlInt(t, s, "SELECT count(*) FROM job_schema"); n != 1 {
			t.Fatalf("job_schema has %d rows, want 1: the unreferenced schema is deleted, the pinned one kept", n)
		}
		if j := mustGetJob(t, s, waiting); string(j.Pin.InputSchema) != `{"title":"kept"}` {
			t.Fatalf("the waiting job's schema after the sweep: %s", j.Pin.InputSchema)
		}
		again := mustEnqueue(t, s, gone)
		if j := mustGetJob(t, s, again); string(j.Pin.InputSchema) != `{"title":"gone"}` {
			t.Fatalf("a job enqueued after the delete has schema %s", j.Pin.InputSchema)
		}
	})
}

// An enqueue writes a stored schema's used_at only when it is older than
// schemaTouch, so a busy action does not write its schema row per job.
func TestEnqueueTouchesStaleSchemaOnly(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		p := pinJob("default")
		p.Pin.InputSchema = json.RawMessage(`{"title":"touch"}`)
		mustEnqueue(t, s, p)
		recent := time.Now().Add(-schemaTouch / 2).Truncate(time.Microsecond)
		setUsedAt(t, s, p.Pin.InputSchema, recent)
		mustEnqueue(t, s, p)
		if got := usedAt(t, s, p.Pin.InputSchema); !got.Equal(recent) {
			t.Fatalf("used_at %v after an enqueue within the touch period, want %v kept", got, recent)
		}
		setUsedAt(t, s, p.Pin.InputSchema, time.Now().Add(-2*schemaTouch))
		before := time.Now().Add(-time.Minute)
		if _, err := s.EnqueueBatch(t.Context(), []spine.EnqueueParams{p, p}); err != nil {
			t.Fatalf("enqueue batch: %v", err)
		}
		if got := usedAt(t, s, p.Pin.InputSchema); got.Before(before) {
			t.Fatalf("used_at %v after an enqueue of a stale schema, want now", got)
		}
	})
}

// sweepBefore sweeps every job finished before now plus a minute.
func sweepBefore(t *testing.T, s *Store, now time.Time) {
	t.Helper()
	if _, err := s.Sweep(t.Context(), spine.SweepParams{Before: now.Add(time.Minute)}); err != nil {
		t.Fatalf("sweep: %v", err)
	}
}

// schemaKey is job_schema's key of a schema text: its hex SHA-256, on
// both databases.
func schemaKey(v json.RawMessage) string {
	sum := sha256.Sum256(v)
	return hex.EncodeToString(sum[:])
}

// sqlInt runs query, which both dialects read alike and which takes no
// argument, on s's database.
func sqlInt(t *testing.T, s *Store, query string) int64 {
	t.Helper()
	var n int64
	var err error
	switch d := s.Driver().(type) {
	case *postgres.Driver:
		err = d.Pool().QueryRow(t.Context(), query).Scan(&n)
	case *sqlite.Driver:
		err = d.DB().QueryRowContext(t.Context(), query).Scan(&n)
	default:
		t.Fatalf("unknown driver %T", d)
	}
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// jobBytes is what the job data takes: on Postgres the job table with its
// TOAST and indexes, on SQLite the pages the file uses.
func jobBytes(t *testing.T, s *Store) int64 {
	t.Helper()
	if _, ok := s.Driver().(*postgres.Driver); ok {
		return sqlInt(t, s, "SELECT pg_total_relation_size('job')")
	}
	return sqlInt(t, s, "SELECT (page_count - freelist_count) * page_size FROM pragma_page_count, pragma_freelist_count, pragma_page_size")
}

// setUsedAt sets the used_at of a stored schema.
func setUsedAt(t *testing.T, s *Store, schema json.RawMessage, at time.Time) {
	t.Helper()
	var n int64
	switch d := s.Driver().(type) {
	case *postgres.Driver:
		tag, err := d.Pool().Exec(t.Context(), "UPDATE job_schema SET used_at = $1 WHERE hash = $2", at, schemaKey(schema))
		if err != nil {
			t.Fatalf("set used_at of %s: %v", schema, err)
		}
		n = tag.RowsAffected()
	case *sqlite.Driver:
		res, err := d.DB().ExecContext(t.Context(), "UPDATE job_schema SET used_at = ? WHERE hash = ?", at.UnixMicro(), schemaKey(schema))
		if err != nil {
			t.Fatalf("set used_at of %s: %v", schema, err)
		}
		n, _ = res.RowsAffected()
	}
	if n != 1 {
		t.Fatalf("set used_at of %s: %d rows", schema, n)
	}
}

// usedAt reads the used_at of a stored schema.
func usedAt(t *testing.T, s *Store, schema json.RawMessage) time.Time {
	t.Helper()
	var at time.Time
	var err error
	switch d := s.Driver().(type) {
	case *postgres.Driver:
		err = d.Pool().QueryRow(t.Context(), "SELECT used_at FROM job_schema WHERE hash = $1", schemaKey(schema)).Scan(&at)
	case *sqlite.Driver:
		var us int64
		err = d.DB().QueryRowContext(t.Context(), "SELECT used_at FROM job_schema WHERE hash = ?", schemaKey(schema)).Scan(&us)
		at = time.UnixMicro(us)
	}
	if err != nil {
		t.Fatalf("read used_at of %s: %v", schema, err)
	}
	return at
}

// pinnedText is v as a job reads its pin back: on Postgres the jsonb text,
// compacted; on SQLite v itself.
func pinnedText(t *testing.T, s *Store, v json.RawMessage) json.RawMessage {
	t.Helper()
	d, ok := s.Driver().(*postgres.Driver)
	if !ok {
		return v
	}
	var text string
	if err := d.Pool().QueryRow(context.Background(), "SELECT $1::jsonb::text", string(v)).Scan(&text); err != nil {
		t.Fatalf("jsonb of the schema: %v", err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(text)); err != nil {
		t.Fatalf("compact: %v", err)
	}
	return buf.Bytes()
}
