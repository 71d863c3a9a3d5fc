package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/windforce/windforce/internal/gittest"
	"github.com/windforce/windforce/spine"
)

// TestSourcesAndApps adds, lists and syncs sources; a bad manifest's 422
// shows the step and reason; apps list shows the catalog; --json prints
// the server's JSON.
func TestSourcesAndApps(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *apiEnv) {
		apps := e.mustRun("apps", "list")
		if !strings.Contains(apps.stdout, "hello") || !strings.Contains(apps.stdout, "greet,sleep,fail") && !strings.Contains(apps.stdout, "greet") {
			t.Fatalf("apps list:\n%s", apps.stdout)
		}
		if list := obj(t, e.mustRun("apps", "list", "--json").stdout)["apps"].([]any); len(list) != 1 {
			t.Fatalf("apps list --json: %v", list)
		}

		bad := gittest.New(t)
		bad.Write(t, map[string]string{"windforce.yaml": "apps:\n  broken:\n    runtime: cobol\n"})
		bad.CommitPush(t, "broken")
		add := e.mustRun("sources", "add", "broken", bad.URL, "--branch", "main")
		if !strings.Contains(add.stdout, "source broken added") {
			t.Fatalf("sources add printed %q", add.stdout)
		}
		r := e.run("sources", "sync", "broken")
		var apiErr *APIError
		if !errors.As(r.err, &apiErr) || apiErr.Status != 422 {
			t.Fatalf("sync of a bad manifest: %v", r.err)
		}
		if msg := r.err.Error(); !strings.Contains(msg, "sync_failed") || !strings.Contains(msg, "step: ") || !strings.Contains(msg, "cobol") {
			t.Fatalf("422 reads %q, want the code, the step and the reason", msg)
		}

		list := e.mustRun("sources", "list")
		if !strings.Contains(list.stdout, "main") || !strings.Contains(list.stdout, "broken") || !strings.Contains(list.stdout, "cobol") {
			t.Fatalf("sources list:\n%s", list.stdout)
		}
		if srcs := obj(t, e.mustRun("sources", "list", "--json").stdout)["sources"].([]any); len(srcs) != 2 {
			t.Fatalf("sources list --json: %v", srcs)
		}
		if synced := obj(t, e.mustRun("sources", "sync", "main", "--json").stdout); synced["commit"] == "" {
			t.Fatalf("sources sync --json: %v", synced)
		}
		if r := e.run("sources", "add", "x", "ftp://nope"); !errors.As(r.err, &apiErr) || apiErr.Status != 422 {
			t.Fatalf("source with an ftp URL: %v", r.err)
		}
		for _, args := range [][]string{{"sources"}, {"sources", "add", "only-id"}, {"sources", "frob"}, {"apps"}, {"jobs", "frob"}} {
			if r := e.run(args...); ExitCode(r.err) != 2 {
				t.Errorf("windforce %v: %v, want a usage error", args, r.err)
			}
		}
	})
}

// TestTokenCreate creates a read token through the CLI and uses it: it
// may list apps but not run jobs.
func TestTokenCreate(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *apiEnv) {
		created := e.mustRun("token", "create", "--scopes", "read", "--label", "ci-reader")
		tok := strings.TrimSpace(created.stdout)
		if tok == "" || strings.Contains(tok, "\n") || !strings.Contains(created.stderr, "read") {
			t.Fatalf("token create printed %q / %q", created.stdout, created.stderr)
		}
		if apps := e.mustRun("apps", "list", "--token", tok); !strings.Contains(apps.stdout, "hello") {
			t.Fatalf("apps list with the new token: %q", apps.stdout)
		}
		r := e.run("run", "hello/greet", "--input", `{"name":"X"}`, "--token", tok)
		var apiErr *APIError
		if !errors.As(r.err, &apiErr) || apiErr.Status != 403 || apiErr.Code != "forbidden" {
			t.Fatalf("run with a read token: %v", r.err)
		}
		asJSON := obj(t, e.mustRun("token", "create", "--scopes", "read,run", "--json").stdout)
		if asJSON["token"] == "" || len(asJSON["scopes"].([]any)) != 2 {
			t.Fatalf("token create --json: %v", asJSON)
		}
		if r := e.run("token", "create", "--scopes", "read,fly"); !errors.As(r.err, &apiErr) || apiErr.Status != 422 {
			t.Fatalf("unknown scope: %v", r.err)
		}
		if r := e.run("token", "create"); ExitCode(r.err) != 2 {
			t.Fatalf("token create without scopes: %v", r.err)
		}
	})
}

// TestSeed enqueues a JSONL file with bad lines: the good lines become
// jobs with trigger kind seed, each bad line is reported with its number
// (bad JSON is never sent), and the exit code is 1.
func TestSeed(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *apiEnv) {
		dir := t.TempDir()
		file := filepath.Join(dir, "jobs.jsonl")
		lines := strings.Join([]string{
			`{"app":"hello","action":"greet","input":{"name":"A"}}`,
			`{"app":"hello","action":`,
			``,
			`{"app":"hello","action":"greet","input":{"name":5}}`,
			`{"app":"hello","action":"greet","input":{"name":"B"}}`,
			`{"action":"greet"}`,
		}, "\n") + "\n"
		if err := os.WriteFile(file, []byte(lines), 0o600); err != nil {
			t.Fatal(err)
		}
		r := e.run("seed", file)
		if r.err == nil || ExitCode(r.err) != 1 {
			t.Fatalf("seed with bad lines: %v, want exit 1", r.err)
		}
		for _, want := range []string{"line 2:", "line 4:", "at /name", "line 6:", "2 of 5 lines enqueued, 3 failed"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
			}
		}
		if strings.Contains(r.stderr, "line 1:") || strings.Contains(r.stderr, "line 5:") || strings.Contains(r.stderr, "line 3:") {
			t.Errorf("a good or blank line was reported:\n%s", r.stderr)
		}
		if n := e.waitingJobs(); n != 2 {
			t.Fatalf("%d jobs waiting, want the 2 good lines", n)
		}

		only := filepath.Join(dir, "inputs.jsonl")
		if err := os.WriteFile(only, []byte("{\"name\":\"C\"}\n{\"name\":\"D\"}\n{\"name\":\"E\"}"), 0o600); err != nil {
			t.Fatal(err)
		}
		out := obj(t, e.mustRun("seed", only, "--app", "hello", "--action", "greet", "--json").stdout)
		if out["enqueued"] != float64(3) || out["failed"] != float64(0) {
			t.Fatalf("seed --json: %v", out)
		}
		if n := e.waitingJobs(); n != 5 {
			t.Fatalf("%d jobs waiting, want 5", n)
		}
		e.wantTriggers(spine.TriggerSeed, 5)
		if r := e.run("seed", only, "--app", "hello"); ExitCode(r.err) != 2 {
			t.Fatalf("--app without --action: %v", r.err)
		}
		if r := e.run("seed", only, "--app", "hello", "--action", "greet", "--token", "wrong"); r.err == nil ||
			!strings.Contains(r.err.Error(), "seed stopped") || !strings.Contains(r.stderr, "0 of ") {
			t.Fatalf("seed with a refused token: %v, want it to stop at once and say what got in\n%s", r.err, r.stderr)
		}
	})
}

// waitingJobs counts the jobs not yet finished (no worker runs here).
func (e *apiEnv) waitingJobs() int64 {
	e.t.Helper()
	rows, err := e.db.Health(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	var n int64
	for _, h := range rows {
		n += h.Waiting + h.Scheduled + h.Running
	}
	return n
}

// wantTriggers checks that n jobs of the workspace have trigger kind k,
// when the store can list jobs.
func (e *apiEnv) wantTriggers(k spine.TriggerKind, n int) {
	e.t.Helper()
	l, ok := e.db.(spine.Lister)
	if !ok {
		e.t.Logf("store %T cannot list jobs yet; trigger kinds not checked", e.db)
		return
	}
	jobs, err := l.ListJobs(e.t.Context(), spine.ListJobsParams{Workspace: testWS, Trigger: k, Limit: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	if len(jobs) != n {
		e.t.Fatalf("%d jobs with trigger %s, want %d", len(jobs), k, n)
	}
}
