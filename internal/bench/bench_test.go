package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	t.Parallel()
	ds := make([]time.Duration, 100)
	for i := range ds {
		ds[len(ds)-1-i] = time.Duration(i+1) * time.Millisecond
	}
	if p := percentile(ds, 50); p != 50 {
		t.Fatalf("p50 = %v, want 50", p)
	}
	if p := percentile(ds, 99); p != 99 {
		t.Fatalf("p99 = %v, want 99", p)
	}
	if p := percentile(nil, 50); p != 0 {
		t.Fatalf("p50 of nothing = %v, want 0", p)
	}
}

// TestRunSQLite runs both modes briefly on a fresh SQLite file and checks
// the result's shape (never its timings) and that Close deletes the file.
func TestRunSQLite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bench.db")
	sys, err := NewWindforce(ctx, "sqlite://"+path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Workers: 4, Duration: 300 * time.Millisecond, Warmup: -1, Backlog: 200, LatencySamples: 3}
	res, err := Run(ctx, sys, cfg)
	if err != nil {
		t.Fatalf("continuous: %v", err)
	}
	if res.System != "windforce" || res.Mode != "continuous" || res.Database != "sqlite" || res.PickupSamples != 3 {
		t.Fatalf("continuous result %+v", res)
	}
	cfg.Jobs = 150
	res, err = Run(ctx, sys, cfg)
	if err != nil {
		t.Fatalf("burn-down: %v", err)
	}
	if res.Mode != "burndown" || res.Jobs != 150 || res.JobsPerSec <= 0 {
		t.Fatalf("burn-down result %+v", res)
	}
	if err := sys.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("bench file left behind: %v", err)
	}
}

// TestNewWindforceRefusesExistingFile protects a real database from a
// bench pointed at it by mistake.
func TestNewWindforceRefusesExistingFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "real.db")
	if err := os.WriteFile(path, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewWindforce(context.Background(), "sqlite://"+path); err == nil {
		t.Fatal("NewWindforce accepted an existing file")
	}
}
