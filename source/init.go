package source

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// InitRepo creates a bare git repository at bare whose branch holds one
// commit with files, the way `windforce dev` turns the bundled example
// into a real git source. It refuses to touch an existing bare directory.
func (g *Git) InitRepo(ctx context.Context, bare, branch string, files fs.FS, message string) error {
	if _, err := os.Stat(bare); err == nil {
		return fmt.Errorf("init repository %s: it exists already", bare)
	}
	if err := ValidateRemote("file://"+bare, branch); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "windforce-init-")
	if err != nil {
		return fmt.Errorf("init repository: %w", err)
	}
	defer os.RemoveAll(work) //nolint:errcheck
	if err := os.CopyFS(work, files); err != nil {
		return fmt.Errorf("init repository: copy files: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(bare), 0o755); err != nil {
		return fmt.Errorf("init repository: %w", err)
	}
	steps := [][]string{
		{"init", "-q", "--bare", "-b", branch, bare},
		{"init", "-q", "-b", branch},
		{"add", "-A"},
		{"-c", "user.name=windforce", "-c", "user.email=windforce@localhost", "commit", "-q", "-m", message},
		{"push", "-q", bare, "HEAD:refs/heads/" + branch},
	}
	for i, args := range steps {
		dir := work
		if i == 0 {
			dir = filepath.Dir(bare)
		}
		if _, err := g.run(ctx, dir, args...); err != nil {
			os.RemoveAll(bare) //nolint:errcheck // a half-made repository would be refused next time
			return fmt.Errorf("init repository %s: %w", bare, err)
		}
	}
	return nil
}
