package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	msqlite "modernc.org/sqlite"
)

// A job's pinned schemas are stored once per content in job_schema
// (migration 0010): the job keeps the hex SHA-256 of each schema's bytes,
// and readers join the text back by hash.
const (
	// schemaTouch is how old a job_schema row's used_at may get before an
	// enqueue pinning it moves it forward: a busy action writes its row
	// once per period, not once per job, and every job pinning a row was
	// created before used_at + schemaTouch (queries/sweep_schemas.sql).
	schemaTouch = time.Hour
	// schemaGrace is how long past used_at a row no job can reference is
	// kept, as on Postgres, where it covers enqueues still in flight.
	schemaGrace = 24 * time.Hour
)

// hashFunc is the SQL name of schemaHash, which migration 0010 uses to
// move existing jobs' schemas: SQLite has no SHA-256 of its own.
const hashFunc = "windforce_sha256"

func init() {
	msqlite.MustRegisterDeterministicScalarFunction(hashFunc, 1, sqlSchemaHash)
}

// sqlSchemaHash is schemaHash for SQL: NULL stays NULL.
func sqlSchemaHash(_ *msqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	switch v := args[0].(type) {
	case nil:
		return nil, nil
	case string:
		return schemaHash([]byte(v)), nil
	case []byte:
		return schemaHash(v), nil
	default:
		return nil, fmt.Errorf("%s: want text, got %T", hashFunc, v)
	}
}

// schemaHash is the job_schema key of a schema: the hex SHA-256 of its
// bytes, which SQLite stores as they are.
func schemaHash(v []byte) string {
	sum := sha256.Sum256(v)
	return hex.EncodeToString(sum[:])
}

// pinnedSchema is a schema this transaction has stored or found fresh.
type pinnedSchema struct {
	hash   string
	usedAt int64
}

// pinSchema makes sure job_schema holds v with a used_at no older than
// schemaTouch before usedAt (microseconds), and returns v's hash for the
// job row: nil (NULL) for no schema. A schema this transaction already
// pinned recently enough (the jobs of a batch) costs a map lookup.
func (w *writeTx) pinSchema(ctx context.Context, v json.RawMessage, usedAt int64) (any, error) {
	if len(v) == 0 {
		return nil, nil
	}
	touch := schemaTouch.Microseconds()
	if p, ok := w.schemas[string(v)]; ok && p.usedAt >= usedAt-touch {
		return p.hash, nil
	}
	p := pinnedSchema{hash: schemaHash(v), usedAt: usedAt}
	hash := sql.Named("hash", p.hash)
	var last int64
	err := w.queryRow(ctx, qSchemaUsedAt, hash).Scan(&last)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, err = w.exec(ctx, qSchemaInsert, hash, sql.Named("used_at", usedAt), sql.Named("body", string(v)))
	case err == nil && last < usedAt-touch:
		_, err = w.exec(ctx, qSchemaTouch, hash, sql.Named("used_at", usedAt))
	case err == nil:
		p.usedAt = last
	}
	if err != nil {
		return nil, fmt.Errorf("store schema %s: %w", p.hash, translate(err))
	}
	if w.schemas == nil {
		w.schemas = map[string]pinnedSchema{}
	}
	w.schemas[string(v)] = p
	return p.hash, nil
}

// sweepSchemas deletes the job_schema rows no job can reference any more
// (queries/sweep_schemas.sql).
func (w *writeTx) sweepSchemas(ctx context.Context, now time.Time) error {
	_, err := w.exec(ctx, qSweepSchemas, sql.Named("now", micros(now)),
		sql.Named("grace_us", schemaGrace.Microseconds()), sql.Named("touch_us", schemaTouch.Microseconds()))
	if err != nil {
		return fmt.Errorf("sweep pinned schemas: %w", translate(err))
	}
	return nil
}
