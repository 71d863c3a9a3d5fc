package postgres

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/spine/storetest"
)

// TestMain fails the package when a test leaves a goroutine behind (a
// listener not stopped by Close, a pool not closed).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestConformance runs the spine conformance suite, each subtest on a
// fresh, migrated schema of its own.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) spine.Store {
		url, schema := testdb.PostgresSchema(t)
		s, err := Open(t.Context(), url, Options{Schema: schema, MaxConns: 6})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		t.Cleanup(s.Close)
		if err := s.Migrate(t.Context()); err != nil {
			t.Fatalf("migrate: %v", err)
		}
		return s
	})
}
