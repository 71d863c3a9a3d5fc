// Package testdb gives tests an isolated, real database: a fresh Postgres
// schema (dropped at cleanup) or a fresh SQLite file in t.TempDir.
//
// Postgres comes from WINDFORCE_TEST_DATABASE_URL (default: the local
// trust-auth server). When no Postgres answers the test is skipped with a
// loud message, unless WINDFORCE_TEST_REQUIRE_POSTGRES=1, where it fails.
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/runner/sandbox"
)

// DefaultPostgresURL is used when WINDFORCE_TEST_DATABASE_URL is unset.
const DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// PostgresURL returns the test server's URL.
func PostgresURL() string {
	if u := os.Getenv("WINDFORCE_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultPostgresURL
}

// Unavailable skips t with a loud message, or fails it when env (for example
// WINDFORCE_TEST_REQUIRE_POSTGRES) is "1".
func Unavailable(t testing.TB, env, what string, err error) {
	t.Helper()
	msg := fmt.Sprintf("%s is not available (%v)", what, err)
	if os.Getenv(env) == "1" {
		t.Fatalf("%s, and %s=1 requires it", msg, env)
	}
	t.Skipf("SKIPPING: %s; set %s=1 to make this a failure", msg, env)
}

// PostgresSchema creates a fresh schema on the test server and drops it when
// the test ends. It returns the server URL and the schema name; stores
// opened with that schema see only their own tables.
func PostgresSchema(t testing.TB) (url, schema string) {
	t.Helper()
	url = PostgresURL()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		Unavailable(t, "WINDFORCE_TEST_REQUIRE_POSTGRES", "Postgres at "+url, err)
	}
	defer conn.Close(ctx)
	schema = "wf_test_" + randomHex(6)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create test schema: %v", err)
	}
	t.Cleanup(func() { dropSchema(t, url, schema) })
	return url, schema
}

func dropSchema(t testing.TB, url, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Logf("drop test schema %s: %v", schema, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
		t.Logf("drop test schema %s: %v", schema, err)
	}
}

// SQLitePath returns a path for a fresh SQLite database in t.TempDir.
func SQLitePath(t testing.TB) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "windforce.db")
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// PostgresDatabase creates a fresh database on the test server and drops
// it (closing its connections) when the test ends. It returns the URL of
// the new database: for tests that start real windforce processes, which
// take a database URL and use its default schema.
func PostgresDatabase(t testing.TB) string {
	t.Helper()
	url := PostgresURL()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		Unavailable(t, "WINDFORCE_TEST_REQUIRE_POSTGRES", "Postgres at "+url, err)
	}
	defer conn.Close(ctx)
	name := "wf_test_" + randomHex(6)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Logf("drop test database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Logf("drop test database %s: %v", name, err)
		}
	})
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	u := fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, name)
	if cfg.Password != "" {
		u = fmt.Sprintf("postgres://%s:%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Password, cfg.Host, cfg.Port, name)
	}
	return u
}

// sandboxProbe remembers, per test binary, whether this host can enforce
// the job sandbox (DESIGN §6).
var sandboxProbe struct {
	once sync.Once
	err  error
}

// RequireSandbox skips t with a loud message when this host cannot
// enforce the job sandbox (no bubblewrap, user namespaces or cgroup
// rights), or fails it when WINDFORCE_TEST_REQUIRE_SANDBOX=1 (CI). Tests
// that start a worker call it first: a worker refuses to start there.
func RequireSandbox(t testing.TB) {
	t.Helper()
	sandboxProbe.once.Do(func() {
		s, err := sandbox.New(sandbox.Config{})
		if err == nil {
			s.Close()
		}
		sandboxProbe.err = err
	})
	if sandboxProbe.err != nil {
		Unavailable(t, "WINDFORCE_TEST_REQUIRE_SANDBOX", "the job sandbox", sandboxProbe.err)
	}
}
