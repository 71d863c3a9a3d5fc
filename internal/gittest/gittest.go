// Package gittest builds real git repositories for tests: a bare remote
// reached by file:// and a working clone that writes, commits and pushes.
// Commits get a fixed identity and the machine's git configuration is
// ignored, so a fresh CI machine without either runs the same.
package gittest

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Repo is a bare remote (URL, Bare) and a working clone (Work) on branch
// main.
type Repo struct {
	URL  string
	Bare string
	Work string
}

// Env is the environment every git command of a test runs with.
func Env() []string {
	return append(os.Environ(),
		"GIT_AUTHOR_NAME=windforce", "GIT_AUTHOR_EMAIL=test@windforce.invalid",
		"GIT_COMMITTER_NAME=windforce", "GIT_COMMITTER_EMAIL=test@windforce.invalid",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
}

// Git runs git in dir and returns its trimmed output; it fails t on error.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), "git", args...)
	cmd.Dir = dir
	cmd.Env = Env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// New creates an empty bare remote and a working clone pointing at it.
func New(t testing.TB) *Repo {
	t.Helper()
	dir := t.TempDir()
	r := &Repo{Bare: filepath.Join(dir, "remote.git"), Work: filepath.Join(dir, "work")}
	Git(t, dir, "init", "-q", "--bare", "-b", "main", r.Bare)
	Git(t, dir, "init", "-q", "-b", "main", r.Work)
	Git(t, r.Work, "remote", "add", "origin", r.Bare)
	r.URL = "file://" + r.Bare
	return r
}

// Write writes files (slash paths → contents) in the working clone.
func (r *Repo) Write(t testing.TB, files map[string]string) {
	t.Helper()
	for p, data := range files {
		full := filepath.Join(r.Work, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// CopyDir copies the regular files under src into the working clone.
func (r *Repo) CopyDir(t testing.TB, src string) {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
	r.Write(t, files)
}

// CommitPush commits everything in the clone, pushes it to main and returns
// the commit.
func (r *Repo) CommitPush(t testing.TB, msg string) string {
	t.Helper()
	Git(t, r.Work, "add", "-A")
	Git(t, r.Work, "commit", "-q", "--allow-empty", "-m", msg)
	Git(t, r.Work, "push", "-q", "origin", "HEAD:refs/heads/main")
	return Git(t, r.Work, "rev-parse", "HEAD")
}

// Example returns the path of a bundled example app (examples/NAME), found
// from this file so it works from any test package.
func Example(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "examples", name)
}
