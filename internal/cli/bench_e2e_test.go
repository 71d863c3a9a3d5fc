package cli

import (
	"errors"
	"slices"
	"testing"

	"github.com/windforce/windforce/internal/bench"
)

// TestE2EConfig: the --e2e flags as bench.E2EConfig, and the Postgres
// server chosen: a postgres:// --database-url, else
// WINDFORCE_TEST_DATABASE_URL, else the local default.
func TestE2EConfig(t *testing.T) {
	t.Setenv("WINDFORCE_TEST_DATABASE_URL", "postgres://test@127.0.0.1:5432/x")
	cfg, err := e2eConfig("sqlite:///tmp/ignored.db", "both", "8, 2", 7, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Databases, []string{"sqlite", "postgres"}) || !cfg.SkipUnavailablePostgres ||
		!slices.Equal(cfg.Concurrency, []int{8, 2}) || cfg.Jobs != 7 || cfg.Warmup != 0 || cfg.Binary == "" ||
		cfg.PostgresURL != "postgres://test@127.0.0.1:5432/x" {
		t.Fatalf("config %+v", cfg)
	}
	cfg, err = e2eConfig("postgres://given@127.0.0.1:5432/y", "postgres", "1", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PostgresURL != "postgres://given@127.0.0.1:5432/y" || cfg.SkipUnavailablePostgres || !slices.Equal(cfg.Databases, []string{"postgres"}) {
		t.Fatalf("config %+v", cfg)
	}
	for _, bad := range [][]string{{"mysql", "1"}, {"both", "0"}, {"both", "1,x"}, {"both", ""}} {
		var u *UsageError
		if _, err := e2eConfig("", bad[0], bad[1], 1, 1); !errors.As(err, &u) {
			t.Errorf("--e2e-db %q --e2e-concurrency %q: %v, want a usage error", bad[0], bad[1], err)
		}
	}
	var u *UsageError
	if _, err := e2eConfig("", "both", "1", 0, 1); !errors.As(err, &u) {
		t.Errorf("--e2e-jobs 0: %v, want a usage error", err)
	}
}

// TestE2EWarmFlags: --warm, --throughput (which needs --warm) and the
// worker's concurrency as bench.E2EConfig; bad combinations are usage
// errors.
func TestE2EWarmFlags(t *testing.T) {
	var cfg bench.E2EConfig
	if err := (e2eWarmFlags{warm: true, throughput: true, jobs: 100, clients: 16, workers: 4}).apply(&cfg); err != nil {
		t.Fatal(err)
	}
	if !cfg.Warm || cfg.BurstJobs != 100 || cfg.BurstClients != 16 || cfg.WorkerConcurrency != 4 {
		t.Fatalf("config %+v", cfg)
	}
	cfg = bench.E2EConfig{}
	if err := (e2eWarmFlags{warm: true, jobs: 100, clients: 16}).apply(&cfg); err != nil || cfg.BurstJobs != 0 {
		t.Fatalf("--warm without --throughput: %v, config %+v (want no throughput run)", err, cfg)
	}
	for _, bad := range []e2eWarmFlags{{throughput: true, jobs: 1, clients: 1}, {warm: true, throughput: true, jobs: 0, clients: 1},
		{warm: true, throughput: true, jobs: 1, clients: 0}, {workers: -1}} {
		var u *UsageError
		if err := bad.apply(&bench.E2EConfig{}); !errors.As(err, &u) {
			t.Errorf("%+v: %v, want a usage error", bad, err)
		}
	}
}
