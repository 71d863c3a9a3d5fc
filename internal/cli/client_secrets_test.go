package cli

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/windforce/windforce/internal/apitest"
	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/secrets"
	"github.com/windforce/windforce/store"
	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

// storedValue opens the current value of secret name in the env's store
// with the API's key.
func (e *apiEnv) storedValue(name string) (string, int64) {
	e.t.Helper()
	rows, err := e.db.SecretsSealed(e.t.Context(), testWS, []string{name})
	if err != nil || len(rows) != 1 {
		e.t.Fatalf("SecretsSealed %s = %+v, %v", name, rows, err)
	}
	v, err := secrets.Open(e.api.SecretsKey, testWS, name, rows[0].Version, rows[0].Ciphertext)
	if err != nil {
		e.t.Fatal(err)
	}
	return string(v), rows[0].Version
}

// TestSecretsCommands: secrets set from a file (as it is), list (never
// the value), set again (a new version), audit, rm; a value on the command
// line, a bad name and an empty file are usage errors that send nothing;
// on both databases.
func TestSecretsCommands(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *apiEnv) {
		const value = "cli-secret-value-0123"
		file := filepath.Join(t.TempDir(), "value")
		if err := os.WriteFile(file, []byte(value+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		set := e.mustRun("secrets", "set", "API_KEY", "--from-file", file, "--description", "the vendor's key")
		if !strings.Contains(set.stdout, "API_KEY created: version 1") || strings.Contains(set.stdout, value) {
			t.Fatalf("secrets set printed %q", set.stdout)
		}
		if v, _ := e.storedValue("API_KEY"); v != value+"\n" {
			t.Fatalf("stored %q, want the file as it is", v)
		}
		again := e.mustRun("secrets", "set", "API_KEY", "--from-file", file, "--json")
		if o := obj(t, again.stdout); o["version"] != float64(2) || strings.Contains(again.stdout, value) {
			t.Fatalf("secrets set --json printed %s", again.stdout)
		}
		list := e.mustRun("secrets", "list")
		if !strings.Contains(list.stdout, "API_KEY") || !strings.Contains(list.stdout, "token:admin") || strings.Contains(list.stdout, value) {
			t.Fatalf("secrets list:\n%s", list.stdout)
		}
		e.mustRun("secrets", "rm", "API_KEY")
		var apiErr *APIError
		if r := e.run("secrets", "rm", "API_KEY"); !errors.As(r.err, &apiErr) || apiErr.Status != 404 {
			t.Fatalf("second rm: %v", r.err)
		}
		audit := e.mustRun("secrets", "audit", "--limit", "2")
		lines := strings.Split(strings.TrimSpace(audit.stdout), "\n")
		if len(lines) != 4 || !strings.Contains(lines[1], "delete") || !strings.Contains(lines[2], "replace") ||
			!strings.HasPrefix(lines[3], "more: windforce secrets audit --cursor ") {
			t.Fatalf("secrets audit:\n%s", audit.stdout)
		}
		cursor := strings.TrimPrefix(lines[3], "more: windforce secrets audit --cursor ")
		if rest := e.mustRun("secrets", "audit", "--cursor", cursor); !strings.Contains(rest.stdout, "create") || strings.Contains(rest.stdout, "more:") {
			t.Fatalf("secrets audit --cursor:\n%s", rest.stdout)
		}

		empty := filepath.Join(t.TempDir(), "empty")
		if err := os.WriteFile(empty, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"secrets", "set", "B", "--value", value}, {"secrets", "set", "B", "--value=" + value}, {"secrets", "set", "B", "-value", value},
			{"secrets", "set", "B", value}, {"secrets", "set", "1BAD", "--from-file", file}, {"secrets", "set", "B", "--from-file", empty},
			{"secrets", "set"},
		} {
			r := e.run(args...)
			if ExitCode(r.err) != 2 || strings.Contains(r.err.Error(), value) {
				t.Errorf("windforce %v: %v, want a usage error that does not repeat the value", args, r.err)
			}
		}
		if list, err := e.db.ListSecrets(t.Context(), testWS); err != nil || len(list) != 0 {
			t.Fatalf("refused commands stored %+v, %v", list, err)
		}
	})
}

// TestSecretsSetFromStdin: without --from-file the value is read from
// stdin, one trailing newline dropped. Not parallel: it replaces Stdin.
func TestSecretsSetFromStdin(t *testing.T) {
	old := Stdin
	t.Cleanup(func() { Stdin = old })
	a := apitest.NewSQLite(t, apitest.Options{Workspace: testWS, Secret: testSecret, AdminToken: testAdminToken, NoSource: true})
	e := &apiEnv{t: t, api: a, db: a.DB, url: a.URL}
	Stdin = strings.NewReader("from stdin\n")
	e.mustRun("secrets", "set", "FROM_STDIN")
	if v, version := e.storedValue("FROM_STDIN"); v != "from stdin" || version != 1 {
		t.Fatalf("stored %q version %d, want %q", v, version, "from stdin")
	}
}

// TestSecretsRotateKey: rotate-key re-encrypts every secret sealed with
// the old key into the configured one, on the database itself; a second
// run has nothing to do; a bad or missing old key is a usage error that
// does not repeat it; on both databases.
func TestSecretsRotateKey(t *testing.T) {
	t.Parallel()
	oldHex, newHex := strings.Repeat("11", 32), strings.Repeat("22", 32)
	oldKey, _ := secrets.ParseKey(oldHex)
	newKey, _ := secrets.ParseKey(newHex)
	for _, db := range []struct {
		name string
		open func(t *testing.T) (*store.Store, string)
	}{{"sqlite", rotateSQLite}, {"postgres", rotatePostgres}} {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			s, url := db.open(t)
			ctx := t.Context()
			for _, name := range []string{"A", "B", "C"} {
				if _, _, err := s.PutSecret(ctx, oldKey, secrets.Put{Workspace: "ws", Name: name, Value: []byte("value " + name), Actor: "t"}); err != nil {
					t.Fatal(err)
				}
			}
			rotate := func(args ...string) cmdResult {
				var out, errOut strings.Builder
				err := Run(context.Background(), append([]string{"secrets", "rotate-key", "--database-url", url}, args...), &out, &errOut)
				return cmdResult{stdout: out.String(), stderr: errOut.String(), err: err}
			}
			r := rotate("--old-key", oldHex, "--secrets-key", newHex, "--batch", "2")
			if r.err != nil || !strings.Contains(r.stdout, "re-encrypted 3 secrets from key "+oldKey.ID()+" to key "+newKey.ID()) {
				t.Fatalf("rotate-key: %v\n%s%s", r.err, r.stdout, r.stderr)
			}
			rows, err := s.SecretsSealed(ctx, "ws", []string{"A", "B", "C"})
			if err != nil || len(rows) != 3 {
				t.Fatal(rows, err)
			}
			for _, row := range rows {
				if v, err := secrets.Open(newKey, "ws", row.Name, row.Version, row.Ciphertext); err != nil || string(v) != "value "+row.Name {
					t.Fatalf("%s with the new key: %q, %v", row.Name, v, err)
				}
			}
			if r := rotate("--old-key", oldHex, "--secrets-key", newHex); r.err != nil || !strings.Contains(r.stdout, "re-encrypted 0 secrets") {
				t.Fatalf("second rotate-key: %v %s", r.err, r.stdout)
			}
			keyFile := filepath.Join(t.TempDir(), "old")
			if err := os.WriteFile(keyFile, []byte(oldHex+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if r := rotate("--old-key-file", keyFile, "--secrets-key", newHex); r.err != nil {
				t.Fatalf("rotate-key --old-key-file: %v", r.err)
			}
			for _, args := range [][]string{
				{"--secrets-key", newHex}, {"--old-key", "not-a-key-hunter2", "--secrets-key", newHex},
				{"--old-key", oldHex, "--old-key-file", keyFile, "--secrets-key", newHex},
				{"--old-key", oldHex, "--secrets-key", "short-hunter2"},
			} {
				if r := rotate(args...); ExitCode(r.err) != 2 || strings.Contains(r.err.Error(), "hunter2") {
					t.Errorf("rotate-key %v: %v, want a usage error that does not repeat the key", args, r.err)
				}
			}
		})
	}
}

func rotateSQLite(t *testing.T) (*store.Store, string) {
	path := testdb.SQLitePath(t)
	d, err := sqlite.Open(t.Context(), path, sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return migratedStore(t, store.New(d)), "sqlite://" + path
}

func rotatePostgres(t *testing.T) (*store.Store, string) {
	url, schema := testdb.PostgresSchema(t)
	d, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema, MaxConns: 4, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return migratedStore(t, store.New(d)), url + sep + "search_path=" + schema
}

func migratedStore(t *testing.T, s *store.Store) *store.Store {
	t.Cleanup(s.Close)
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestWorkerOpensWithTheServersKey: the worker's runner gets the key the
// server seals with, WINDFORCE_SECRETS_KEY when set (else the runner
// derives it from WINDFORCE_SECRET as the server does), and a bad
// WINDFORCE_SECRETS_KEY refuses to start the worker.
func TestWorkerOpensWithTheServersKey(t *testing.T) {
	t.Parallel()
	keyHex := strings.Repeat("ab", 32)
	want, _ := secrets.ParseKey(keyHex)
	_, f := boundFlags(cmdWorker) // the worker's defaults
	f.dir, f.secret, f.secretsKey, f.sandbox.mode = t.TempDir(), "worker-secret-0123456789abcdef0123", keyHex, "off"
	rc, err := f.runnerConfig()
	if err != nil {
		t.Fatal(err)
	}
	if rc.SecretsKey.ID() != want.ID() {
		t.Fatalf("runner key %v, want WINDFORCE_SECRETS_KEY's %v", rc.SecretsKey, want)
	}
	derived, _ := secrets.DeriveKey([]byte(f.secret))
	f.secretsKey = ""
	if rc, err := f.runnerConfig(); err != nil || rc.SecretsKey.ID() != derived.ID() {
		t.Fatalf("without WINDFORCE_SECRETS_KEY: %v, %v; want the key derived from WINDFORCE_SECRET", rc.SecretsKey, err)
	}
	f.secretsKey = "not-a-key-hunter2"
	if _, err := f.runnerConfig(); ExitCode(err) != 2 || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("a bad WINDFORCE_SECRETS_KEY: %v, want a usage error that does not repeat it", err)
	}
}
