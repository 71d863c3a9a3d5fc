package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/windforce/windforce/internal/testdb"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if e2eBin != "" {
		_ = os.RemoveAll(filepath.Dir(e2eBin))
	}
	os.Exit(code)
}

var (
	e2eBuildOnce sync.Once
	e2eBin       string
	e2eBuildErr  error
)

// e2eBinary builds cmd/windforce once per test run (without -race: it is
// the system being measured) into a temporary directory.
func e2eBinary(t *testing.T) string {
	t.Helper()
	e2eBuildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "windforce-bench-e2e-bin-")
		if err != nil {
			e2eBuildErr = err
			return
		}
		e2eBin = filepath.Join(dir, "windforce")
		out, err := exec.Command("go", "build", "-o", e2eBin, "../../cmd/windforce").CombinedOutput()
		if err != nil {
			e2eBuildErr = errors.New(string(out))
		}
	})
	if e2eBuildErr != nil {
		t.Fatalf("build windforce: %v", e2eBuildErr)
	}
	return e2eBin
}

// requireBun skips loudly without bun, or fails with
// WINDFORCE_TEST_REQUIRE_BUN=1.
func requireBun(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("bun"); err != nil {
		testdb.Unavailable(t, "WINDFORCE_TEST_REQUIRE_BUN", "bun", err)
	}
}

// TestE2E runs the end-to-end bench with a handful of jobs on each
// database (Postgres skipping loudly when absent) and checks that the
// report and the table carry every figure; never the figures' values.
func TestE2E(t *testing.T) {
	t.Parallel()
	requireBun(t)
	testdb.RequireSandbox(t)
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			t.Parallel()
			cfg := E2EConfig{Binary: e2eBinary(t), Databases: []string{db}, PostgresURL: testdb.PostgresURL(),
				SkipUnavailablePostgres: true, Jobs: 3, Concurrency: []int{2}, Warmup: 1, Progress: &lockedBuffer{}}
			rep, err := E2E(context.Background(), cfg)
			if err != nil {
				t.Fatalf("e2e: %v\nprogress:\n%s", err, cfg.Progress)
			}
			if len(rep.Skipped) > 0 {
				testdb.Unavailable(t, "WINDFORCE_TEST_REQUIRE_POSTGRES", "Postgres", errors.New(rep.Skipped[0].Reason))
			}
			checkE2EReport(t, rep, db)
			var table bytes.Buffer
			if err := WriteE2ETable(&table, rep); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{db, "?wait round trip p50", "?wait round trip p99", "concurrency 1 (jobs/s)",
				"concurrency 2 (jobs/s)", "per-job overhead p50", "queued", "run"} {
				if !strings.Contains(table.String(), want) {
					t.Errorf("table lacks %q:\n%s", want, table.String())
				}
			}
			line, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"bare_start_p50_ms", "wait_p99_ms", "wait_p50_ratio", "overhead_p50_ms", "time_ratio", "bare_jobs_per_sec", "run_p50_ms"} {
				if !bytes.Contains(line, []byte(`"`+key+`"`)) {
					t.Errorf("JSON lacks %s: %s", key, line)
				}
			}
		})
	}
}

func checkE2EReport(t *testing.T, rep E2EReport, db string) {
	t.Helper()
	if rep.Mode != "e2e" || rep.Jobs != 3 || rep.WorkerConcurrency != 2 || rep.Bun == "" || rep.Bun == "unknown" || len(rep.Skipped) != 0 {
		t.Fatalf("report %+v", rep)
	}
	if len(rep.Results) != 1 {
		t.Fatalf("results %+v", rep.Results)
	}
	r := rep.Results[0]
	if r.Database != db || r.Samples != 3 {
		t.Fatalf("result %+v", r)
	}
	for name, v := range map[string]float64{"bare p50": r.BareStartP50, "bare p99": r.BareStartP99, "wait p50": r.WaitP50,
		"wait p99": r.WaitP99, "p50 ratio": r.WaitP50Ratio, "p99 ratio": r.WaitP99Ratio} {
		if v <= 0 {
			t.Errorf("%s = %v, want a positive figure (result %+v)", name, v, r)
		}
	}
	if b := r.Breakdown; b.QueuedP50 < 0 || b.RunP50 <= 0 || b.RestP50 <= 0 {
		t.Errorf("breakdown %+v has a missing figure", b)
	}
	if r.OverheadP50 != round3(r.WaitP50-r.BareStartP50) {
		t.Errorf("overhead %v is not wait p50 %v minus bare p50 %v", r.OverheadP50, r.WaitP50, r.BareStartP50)
	}
	var levels []int
	for _, tp := range r.Throughput {
		levels = append(levels, tp.Concurrency)
		if tp.Seconds <= 0 || tp.JobsPerSec <= 0 || tp.BareSeconds <= 0 || tp.BareJobsPerSec <= 0 || tp.TimeRatio <= 0 {
			t.Errorf("throughput %+v has a missing figure", tp)
		}
	}
	if !slices.Equal(levels, []int{1, 2}) {
		t.Errorf("concurrency levels %v, want [1 2] (1 is always measured)", levels)
	}
}

// TestE2EWarm runs the end-to-end bench with --warm and a short
// --throughput on each database and checks that the warm figures are all
// there beside the cold ones: latency, every level, the throughput run,
// and a warm process found idle afterwards; never the figures' values.
func TestE2EWarm(t *testing.T) {
	t.Parallel()
	requireBun(t)
	testdb.RequireSandbox(t)
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			t.Parallel()
			cfg := E2EConfig{Binary: e2eBinary(t), Databases: []string{db}, PostgresURL: testdb.PostgresURL(),
				SkipUnavailablePostgres: true, Jobs: 3, Concurrency: []int{2}, Warmup: 1, Progress: &lockedBuffer{},
				Warm: true, BurstJobs: 12, BurstClients: 4}
			rep, err := E2E(context.Background(), cfg)
			if err != nil {
				t.Fatalf("e2e --warm: %v\nprogress:\n%s", err, cfg.Progress)
			}
			if len(rep.Skipped) > 0 {
				testdb.Unavailable(t, "WINDFORCE_TEST_REQUIRE_POSTGRES", "Postgres", errors.New(rep.Skipped[0].Reason))
			}
			checkE2EReport(t, rep, db)
			w := rep.Results[0].Warm
			if w == nil {
				t.Fatal("no warm figures")
			}
			if w.WaitP50 <= 0 || w.WaitP99 <= 0 || w.Samples != 3 || w.Breakdown.RunP50 <= 0 || len(w.Throughput) != 2 {
				t.Errorf("warm figures %+v", w)
			}
			if b := w.Burst; b == nil || b.Jobs != 12 || b.Clients != 4 || b.JobsPerSec <= 0 || b.P99 <= 0 {
				t.Errorf("warm throughput %+v", b)
			}
			if m := w.Memory; m.Processes < 1 || m.IdleRSSP50MiB <= 0 || m.PoolRSSMiB < m.IdleRSSP50MiB {
				t.Errorf("warm pool memory %+v: want at least one warm bun found idle", m)
			}
			var table bytes.Buffer
			if err := WriteE2ETable(&table, rep); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"warm (hellowarm/greet", "warm goals", "warm throughput", "warm pool after the runs"} {
				if !strings.Contains(table.String(), want) {
					t.Errorf("table lacks %q:\n%s", want, table.String())
				}
			}
			line, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{`"warm":{`, `"burst":{`, `"idle_rss_p50_mib"`, `"pool_rss_mib"`} {
				if !bytes.Contains(line, []byte(key)) {
					t.Errorf("JSON lacks %s: %s", key, line)
				}
			}
		})
	}
}

// TestE2ESkipsUnreachablePostgres: with the skip asked for, a Postgres
// that does not answer is listed as skipped, not an error; without it,
// it is an error that says so.
func TestE2ESkipsUnreachablePostgres(t *testing.T) {
	t.Parallel()
	requireBun(t)
	cfg := E2EConfig{Binary: "/nonexistent/windforce", Databases: []string{"postgres"},
		PostgresURL: "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=2", SkipUnavailablePostgres: true}
	rep, err := E2E(context.Background(), cfg)
	if err != nil {
		t.Fatalf("e2e: %v", err)
	}
	if len(rep.Results) != 0 || len(rep.Skipped) != 1 || rep.Skipped[0].Database != "postgres" ||
		!strings.Contains(rep.Skipped[0].Reason, "not reachable") {
		t.Fatalf("report %+v", rep)
	}
	var table bytes.Buffer
	if err := WriteE2ETable(&table, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "postgres: skipped") {
		t.Fatalf("table does not say postgres was skipped:\n%s", table.String())
	}
	cfg.SkipUnavailablePostgres = false
	if _, err := E2E(context.Background(), cfg); !errors.Is(err, ErrPostgresUnavailable) {
		t.Fatalf("e2e without the skip: %v, want ErrPostgresUnavailable", err)
	}
}

func TestE2EConcurrencyLevels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want []int }{
		{nil, []int{1, 2, 8}},
		{[]int{8, 2}, []int{1, 2, 8}},
		{[]int{4, 4, 1}, []int{1, 4}},
		{[]int{0, 3}, []int{1, 3}},
	} {
		cfg := E2EConfig{Concurrency: tc.in}
		cfg.defaults()
		if !slices.Equal(cfg.Concurrency, tc.want) {
			t.Errorf("levels %v -> %v, want %v", tc.in, cfg.Concurrency, tc.want)
		}
	}
}

// lockedBuffer is a progress writer a failing test can print.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
