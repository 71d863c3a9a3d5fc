package postgres

import (
	"context"
	"sync"
	"testing"

	"github.com/windforce/windforce/internal/testdb"
)

func TestMigrateTwiceIsNoop(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	ctx := context.Background()
	cur, latest, err := s.SchemaVersion(ctx)
	if err != nil {
		t.Fatalf("schema version before migrate: %v", err)
	}
	if cur != 0 || latest < 1 {
		t.Fatalf("before migrate: current %d latest %d, want 0 and >= 1", cur, latest)
	}
	for i := range 2 {
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("migrate #%d: %v", i+1, err)
		}
	}
	cur, latest, err = s.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cur != latest {
		t.Fatalf("after migrate: current %d, latest %d", cur, latest)
	}
	var rows int
	if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM schema_migration").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != latest {
		t.Fatalf("schema_migration has %d rows, want %d", rows, latest)
	}
}

func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	url, schema := testdb.PostgresSchema(t)
	ctx := context.Background()
	// Four servers starting at once, each with its own pool: the advisory
	// lock queues them and all but the first find nothing to do.
	stores := make([]*Driver, 4)
	for i := range stores {
		s, err := Open(ctx, url, Options{Schema: schema, MaxConns: 2})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		stores[i] = s
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(stores))
	for _, s := range stores {
		wg.Go(func() { errs <- s.Migrate(ctx) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent migrate: %v", err)
		}
	}
	cur, latest, err := stores[0].SchemaVersion(ctx)
	if err != nil || cur != latest {
		t.Fatalf("after concurrent migrate: current %d latest %d err %v", cur, latest, err)
	}
}

func TestMigrateRefusesNewerDatabase(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	if _, err := s.pool.Exec(ctx, "INSERT INTO schema_migration (version, name) VALUES (999, 'future')"); err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err == nil {
		t.Fatal("migrate accepted a database ahead of the binary")
	}
}
