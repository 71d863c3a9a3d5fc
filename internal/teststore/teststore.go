// Package teststore opens the real stores for the tests of other packages:
// a fresh SQLite file or a fresh Postgres schema (see testdb), migrated,
// quiet, and closed at the test's cleanup.
package teststore

import (
	"log/slog"
	"testing"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/store"
	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

// SQLite is a migrated store core on a fresh SQLite file.
func SQLite(t testing.TB) *store.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), testdb.SQLitePath(t), sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return store.New(s)
}

// Postgres is a migrated store core of at most maxConns connections on a
// fresh Postgres schema. Without Postgres it skips loudly (see testdb).
func Postgres(t testing.TB, maxConns int32) *store.Store {
	t.Helper()
	url, schema := testdb.PostgresSchema(t)
	s, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema, MaxConns: maxConns, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return store.New(s)
}

// PostgresCache is the object cache kept in the database of s, a store
// Postgres made.
func PostgresCache(t testing.TB, s *store.Store) *postgres.ObjectCache {
	t.Helper()
	d, ok := s.Driver().(*postgres.Driver)
	if !ok {
		t.Fatalf("store is on %T, not Postgres", s.Driver())
	}
	return d.ObjectCache().(*postgres.ObjectCache)
}
