package sqlite

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/store/migrate"
)

// The schema sharing itself runs on both databases over the core
// (store/pinned_schema_test.go); the migration that moved old rows, and
// its SQL hash function, are this database's own.

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
		j, err := s.Executor().GetJob(ctx, "ws", ids[i])
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
	all, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	ms, err := migrate.Before(all, name)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	err = s.write(ctx, func(w *writeTx) error {
		if _, err := w.tx.ExecContext(ctx, sqlOf(qMigrateTable)); err != nil {
			return err
		}
		for _, m := range ms {
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
