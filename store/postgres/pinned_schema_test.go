package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/store/migrate"
)

// The schema sharing itself runs on both databases over the core
// (store/pinned_schema_test.go); the migration that moved old rows is
// this database's own.

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
		j, err := s.Executor().GetJob(ctx, "ws", uuid.MustParse(ids[i]))
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
	all, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	ms, err := migrate.Before(all, name)
	if err != nil {
		t.Fatal(err)
	}
	err = s.inTx(context.Background(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(context.Background(), qMigrateInit); err != nil {
			return err
		}
		for _, m := range ms {
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
