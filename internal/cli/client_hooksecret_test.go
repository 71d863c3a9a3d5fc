package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSourcesHookSecret: a hook secret is given on `sources add` or later
// with `sources hook-secret` (as text or from a file), listed only as
// set, cleared with --clear, and refused by the server when too short.
func TestSourcesHookSecret(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *apiEnv) {
		const secret = "cli hook secret 0123456789"
		add := e.mustRun("sources", "add", "gh", e.api.Repo.URL, "--hook-secret", secret, "--json")
		if src := obj(t, add.stdout); src["hook_secret_set"] != true || strings.Contains(add.stdout, secret) {
			t.Fatalf("sources add --hook-secret printed %s", add.stdout)
		}
		list := e.mustRun("sources", "list")
		if !strings.Contains(list.stdout, "HOOK SECRET") || !strings.Contains(list.stdout, "set") || strings.Contains(list.stdout, secret) {
			t.Fatalf("sources list:\n%s", list.stdout)
		}
		if out := e.mustRun("sources", "hook-secret", "gh", "--clear").stdout; !strings.Contains(out, "cleared") {
			t.Fatalf("hook-secret --clear printed %q", out)
		}
		file := filepath.Join(t.TempDir(), "secret")
		if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if out := e.mustRun("sources", "hook-secret", "gh", "--hook-secret-file", file).stdout; !strings.Contains(out, "hook secret set") {
			t.Fatalf("hook-secret --hook-secret-file printed %q", out)
		}
		var apiErr *APIError
		if r := e.run("sources", "hook-secret", "gh", "--hook-secret", "short"); !errors.As(r.err, &apiErr) || apiErr.Status != 422 {
			t.Fatalf("a short hook secret: %v", r.err)
		}
		for _, args := range [][]string{{"sources", "hook-secret", "gh"}, {"sources", "hook-secret", "gh", "--clear", "--hook-secret", secret},
			{"sources", "hook-secret", "gh", "--hook-secret", secret, "--hook-secret-file", file}} {
			if r := e.run(args...); ExitCode(r.err) != 2 {
				t.Errorf("windforce %v: %v, want a usage error", args, r.err)
			}
		}
	})
}
