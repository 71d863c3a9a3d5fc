package store

import (
	"log/slog"
	"testing"

	"go.uber.org/goleak"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

// TestMain fails the package when a test leaves a goroutine behind (a
// listener not stopped by Close, a pool not closed).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// drivers open a fresh, migrated core on each database: a new Postgres
// schema (skipped loudly without Postgres, see testdb) or a new SQLite
// file, closed at cleanup.
var drivers = []struct {
	name string
	open func(t *testing.T) *Store
}{
	{"postgres", openPostgres},
	{"sqlite", openSQLite},
}

// forEachDriver runs fn in parallel subtests, once per database, each on a
// fresh core.
func forEachDriver(t *testing.T, fn func(t *testing.T, s *Store)) {
	t.Helper()
	eachDriver(t, func(t *testing.T, open func(t *testing.T) *Store) { fn(t, open(t)) })
}

// eachDriver runs fn once per database with the opener, for suites that
// open many stores (storetest, catalogtest …).
func eachDriver(t *testing.T, fn func(t *testing.T, open func(t *testing.T) *Store)) {
	t.Helper()
	for _, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			fn(t, d.open)
		})
	}
}

func openPostgres(t *testing.T) *Store {
	t.Helper()
	url, schema := testdb.PostgresSchema(t)
	return openPostgresAt(t, url, schema)
}

// openPostgresAt opens a core on schema, as another process on the same
// database would.
func openPostgresAt(t *testing.T, url, schema string) *Store {
	t.Helper()
	d, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema, MaxConns: 6, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	return migrated(t, New(d))
}

func openSQLite(t *testing.T) *Store {
	t.Helper()
	d, err := sqlite.Open(t.Context(), testdb.SQLitePath(t), sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	return migrated(t, New(d))
}

// migrated migrates s and closes it at cleanup (before testdb drops the
// schema or the file).
func migrated(t *testing.T, s *Store) *Store {
	t.Helper()
	t.Cleanup(s.Close)
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return s
}
