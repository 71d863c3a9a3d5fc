package e2e_test

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitEnv gives the test's commits an identity and ignores the machine's
// git configuration, so a fresh CI machine without either runs the same.
func gitEnv() []string {
	return append(os.Environ(),
		"GIT_AUTHOR_NAME=windforce-e2e", "GIT_AUTHOR_EMAIL=e2e@windforce.invalid",
		"GIT_COMMITTER_NAME=windforce-e2e", "GIT_COMMITTER_EMAIL=e2e@windforce.invalid",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
}

// git runs git in dir and returns its trimmed output; it fails t on error.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), "git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// helloRemote creates a bare remote holding examples/hello on branch main,
// pushed from a working clone, and returns its file:// URL and the commit.
func helloRemote(t *testing.T) (url, commit string) {
	t.Helper()
	dir := t.TempDir()
	bare, work := filepath.Join(dir, "remote.git"), filepath.Join(dir, "work")
	git(t, dir, "init", "-q", "--bare", "-b", "main", bare)
	git(t, dir, "init", "-q", "-b", "main", work)
	copyTree(t, filepath.Join("..", "..", "examples", "hello"), work)
	git(t, work, "add", "-A")
	git(t, work, "commit", "-q", "-m", "hello example")
	git(t, work, "push", "-q", bare, "HEAD:refs/heads/main")
	return "file://" + bare, git(t, work, "rev-parse", "HEAD")
}

// copyTree copies the regular files under src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}
