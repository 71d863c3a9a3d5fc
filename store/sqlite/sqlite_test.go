package sqlite

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/windforce/windforce/internal/testdb"
)

// TestMain fails the package when a test leaves a goroutine behind (a pool
// not closed by Close).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// openStore opens a Store on a fresh file, not migrated, closed at cleanup.
func openStore(t *testing.T) *Driver {
	t.Helper()
	s, err := Open(context.Background(), testdb.SQLitePath(t), Options{Logger: quiet})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// newStore opens a migrated Store on a fresh file.
func newStore(t *testing.T) *Driver {
	t.Helper()
	s := openStore(t)
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return s
}
