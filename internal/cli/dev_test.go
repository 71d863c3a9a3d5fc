package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/runner"
)

// TestDevZeroConfig: with no flag and no variable, dev keeps everything
// under --dir: the SQLite database and file object cache in it, and the
// dev drain grace.
func TestDevZeroConfig(t *testing.T) {
	clearSettingsEnv(t)
	dir := t.TempDir()
	f, err := parseDevFlags([]string{"--dir", dir}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if f.dir != dir || f.dbURL != "sqlite://"+filepath.Join(dir, "windforce.db") || f.objectCache != "file://"+filepath.Join(dir, "objects") {
		t.Fatalf("dir %s, database %s, object cache %s", f.dir, f.dbURL, f.objectCache)
	}
	if f.drainGrace != 5*time.Second || f.heartbeat != 5*time.Second || f.killGrace != runner.DefaultKillGrace ||
		f.zombieTimeout != time.Minute || f.reaperInterval != 15*time.Second || f.restartLimit != 3 || f.tags != "default" {
		t.Fatalf("defaults %+v", f)
	}
	rel, err := parseDevFlags(nil, io.Discard)
	if err != nil || !filepath.IsAbs(rel.dir) || rel.dbURL != "sqlite://"+filepath.Join(rel.dir, "windforce.db") {
		t.Fatalf("default dir: %+v, %v", rel, err)
	}
}

// TestDevReadsTheSharedSettings: dev takes the database, the object
// cache, the spine timings and the limits from their WINDFORCE_*
// variables as server and worker do; a flag still wins.
func TestDevReadsTheSharedSettings(t *testing.T) {
	clearSettingsEnv(t)
	for v, val := range map[string]string{
		"WINDFORCE_DATABASE_URL": "postgres://wf@db.internal/wf", "WINDFORCE_OBJECT_CACHE": "postgres",
		"WINDFORCE_HEARTBEAT": "2s", "WINDFORCE_KILL_GRACE": "9s", "WINDFORCE_ZOMBIE_TIMEOUT": "40s",
		"WINDFORCE_REAPER_INTERVAL": "3s", "WINDFORCE_RESTART_LIMIT": "7", "WINDFORCE_RETENTION": "24h",
		"WINDFORCE_MAX_RESULT_BYTES": "64KiB", "WINDFORCE_MAX_INPUT_BYTES": "2MiB", "WINDFORCE_MAX_CHILD_DEPTH": "4",
		"WINDFORCE_TAGS": "gpu", "WINDFORCE_DRAIN_GRACE": "1s",
	} {
		t.Setenv(v, val)
	}
	f, err := parseDevFlags([]string{"--dir", t.TempDir(), "--heartbeat", "3s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if f.dbURL != "postgres://wf@db.internal/wf" || f.objectCache != "postgres" {
		t.Fatalf("database %s, object cache %s", f.dbURL, f.objectCache)
	}
	if f.heartbeat != 3*time.Second || f.killGrace != 9*time.Second || f.zombieTimeout != 40*time.Second ||
		f.reaperInterval != 3*time.Second || f.restartLimit != 7 || f.retention != 24*time.Hour ||
		f.maxResult != 64<<10 || f.maxInput != 2<<20 || f.limits.maxChildDepth != 4 || f.tags != "gpu" || f.drainGrace != time.Second {
		t.Fatalf("settings %+v", f)
	}
	f.secret = workerSecret
	rc, err := f.runnerConfig()
	if err != nil || rc.KillGrace != 9*time.Second || rc.MaxResultBytes != 64<<10 {
		t.Fatalf("runner config %+v, %v", rc, err)
	}
	t.Setenv("WINDFORCE_ZOMBIE_TIMEOUT", "0s")
	if _, err := parseDevFlags(nil, io.Discard); err == nil || ExitCode(err) != 2 {
		t.Fatalf("zero zombie timeout: %v", err)
	}
}

// TestDevOnPostgresFromTheEnvironment: `WINDFORCE_DATABASE_URL=postgres://…
// WINDFORCE_OBJECT_CACHE=postgres windforce dev` keeps its state in
// Postgres, not in --dir, records WINDFORCE_ZOMBIE_TIMEOUT there, and runs
// the example's job.
func TestDevOnPostgresFromTheEnvironment(t *testing.T) {
	testdb.RequireSandbox(t)
	clearSettingsEnv(t)
	db := testdb.PostgresDatabase(t)
	t.Setenv("WINDFORCE_DATABASE_URL", db)
	t.Setenv("WINDFORCE_OBJECT_CACHE", "postgres")
	t.Setenv("WINDFORCE_ZOMBIE_TIMEOUT", "17s")
	dir := filepath.Join(t.TempDir(), "state")
	base, token := startDevForTest(t, dir)

	conn, err := pgx.Connect(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var zombieMS int64
	if err := conn.QueryRow(t.Context(), "SELECT value FROM spine_setting WHERE key = 'zombie_timeout_ms'").Scan(&zombieMS); err != nil || zombieMS != 17000 {
		t.Fatalf("zombie timeout in Postgres: %d, %v", zombieMS, err)
	}
	for _, name := range []string{"windforce.db", "objects"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("dev on Postgres made %s in --dir (%v)", name, err)
		}
	}
	req, _ := http.NewRequestWithContext(t.Context(), "POST", base+"/api/w/default/jobs/run/hello/greet?wait=60s", strings.NewReader(`{"name":"Ada"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "Hello, Ada!") {
		t.Fatalf("run hello/greet: %d %s", res.StatusCode, body)
	}
	var jobs int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM job").Scan(&jobs); err != nil || jobs != 1 {
		t.Fatalf("jobs in Postgres: %d, %v", jobs, err)
	}
}

// startDevForTest runs `windforce dev` in dir on a free port until the
// test ends and returns its API URL and admin token from the banner.
func startDevForTest(t *testing.T, dir string) (base, token string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	outR, outW := io.Pipe()
	stderr := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- RunDev(ctx, []string{"--dir", dir, "--listen", "127.0.0.1:0", "--sync-interval", "0"}, outW, stderr)
		outW.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("dev returned %v", err)
		}
		if t.Failed() {
			t.Logf("dev stderr:\n%s", stderr.String())
		}
	})
	sc := bufio.NewScanner(outR)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "console: "); ok {
			base = strings.TrimSuffix(v, "/")
		}
		if v, ok := strings.CutPrefix(line, "admin token: "); ok {
			token = v
			break
		}
	}
	if token == "" {
		t.Fatal("no banner from dev")
	}
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	return base, token
}
