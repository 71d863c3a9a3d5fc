package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
)

// The writer runs with the pragmas the durability and concurrency story
// rests on; the readers cannot write.
func TestPragmas(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	for name, want := range map[string]string{
		"journal_mode": "wal",
		"busy_timeout": "10000",
		"synchronous":  "2", // FULL
		"foreign_keys": "0",
		"query_only":   "0",
	} {
		if got := pragma(t, s.writer, name); got != want {
			t.Errorf("writer PRAGMA %s = %q, want %q", name, got, want)
		}
	}
	for name, want := range map[string]string{
		"journal_mode": "wal",
		"busy_timeout": "10000",
		"query_only":   "1",
	} {
		if got := pragma(t, s.reader, name); got != want {
			t.Errorf("reader PRAGMA %s = %q, want %q", name, got, want)
		}
	}
	if _, err := s.reader.ExecContext(context.Background(), "DELETE FROM job"); err == nil {
		t.Error("a write on the reader pool succeeded; want it refused (query_only)")
	}
	if got := s.writer.Stats().MaxOpenConnections; got != 1 {
		t.Errorf("writer pool allows %d connections, want exactly 1", got)
	}
}

func TestOpenCreatesDirectory(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a", "b?c", "windforce.db")
	s, err := Open(context.Background(), path, Options{Logger: quiet})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file not at %s: %v", path, err)
	}
}

func TestOpenRefusesMemory(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"", ":memory:"} {
		if s, err := Open(context.Background(), path, Options{Logger: quiet}); !errors.Is(err, spine.ErrInvalid) {
			if s != nil {
				s.Close()
			}
			t.Errorf("Open(%q): error %v, want one wrapping ErrInvalid", path, err)
		}
	}
}

func TestMigrateTwiceIsNoop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	cur, latest, err := s.SchemaVersion(ctx)
	if err != nil || cur != 0 || latest < 1 {
		t.Fatalf("SchemaVersion before migrate = %d, %d, %v; want 0, >=1, nil", cur, latest, err)
	}
	if s.stmts.Load() != nil {
		t.Fatal("statements prepared before the schema exists")
	}
	for i := range 2 {
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("migrate #%d: %v", i+1, err)
		}
	}
	cur, latest, err = s.SchemaVersion(ctx)
	if err != nil || cur != latest {
		t.Fatalf("SchemaVersion after migrate = %d, %d, %v; want equal", cur, latest, err)
	}
	if n := count(t, s, "SELECT count(*) FROM schema_migration"); n != latest {
		t.Fatalf("schema_migration has %d rows, want %d", n, latest)
	}
	if n := count(t, s, "SELECT count(*) FROM spine_setting"); n != 1 {
		t.Fatalf("spine_setting has %d rows after two migrations, want 1", n)
	}
	if s.stmts.Load() == nil {
		t.Fatal("statements not prepared after migrate")
	}
}

// A store reopened on a migrated file prepares its statements at Open.
func TestReopenPrepares(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "windforce.db")
	s, err := Open(ctx, path, Options{Logger: quiet})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	id := enqueue(t, s, job("default")).ID
	s.Close()
	s.Close() // idempotent

	s, err = Open(ctx, path, Options{Logger: quiet})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	if s.stmts.Load() == nil {
		t.Fatal("statements not prepared when opening a current schema")
	}
	if _, err := s.Executor().GetJob(ctx, "ws", id); err != nil {
		t.Fatalf("job enqueued before reopen: %v", err)
	}
}

// Before Migrate, store methods fail with the missing table, not a hang or
// a panic.
func TestUnmigratedFailsClearly(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	p, err := spine.PrepareEnqueue(job("default"), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Executor().EnqueueInsert(context.Background(), p, true)
	if err == nil || !strings.Contains(err.Error(), "no such table") {
		t.Fatalf("enqueue before migrate: %v, want a missing-table error", err)
	}
}

// Every query file is named in a list, none twice in one list, and every
// listed query has a file. A read may be on the writer's list too (it is
// then prepared for reads inside a write transaction as well); a migration
// query is on no other list.
func TestQueriesComplete(t *testing.T) {
	t.Parallel()
	listed := map[query]bool{}
	for i, qs := range [][]query{writerQueries, readerQueries, migrationQueries} {
		inList := map[query]bool{}
		for _, q := range qs {
			if inList[q] || (i == 2 && listed[q]) {
				t.Errorf("query %s listed twice", q)
			}
			inList[q], listed[q] = true, true
			if _, ok := queryText[q]; !ok {
				t.Errorf("query %s has no file queries/%s.sql", q, q)
			}
		}
	}
	for q := range queryText {
		if !listed[q] {
			t.Errorf("queries/%s.sql is not listed", q)
		}
	}
}
