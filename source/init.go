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
// The repository is built beside bare and renamed into place last, so a
// process killed halfway leaves no half-made repository at bare.
func (g *Git) InitRepo(ctx context.Context, bare, branch string, files fs.FS, message string) error {
	bare, err := filepath.Abs(bare) // git runs in another directory
	if err != nil {
		return fmt.Errorf("init repository: %w", err)
	}
	if _, err := os.Stat(bare); err == nil {
		return fmt.Errorf("init repository %s: it exists already", bare)
	}
	if err := ValidateRemote("file://"+bare, branch); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(bare), 0o755); err != nil {
		return fmt.Errorf("init repository: %w", err)
	}
	work, err := os.MkdirTemp("", "windforce-init-")
	if err != nil {
		return fmt.Errorf("init repository: %w", err)
	}
	defer os.RemoveAll(work) //nolint:errcheck
	building, err := os.MkdirTemp(filepath.Dir(bare), "."+filepath.Base(bare)+".building-")
	if err != nil {
		return fmt.Errorf("init repository: %w", err)
	}
	defer os.RemoveAll(building) //nolint:errcheck // gone after the rename
	if err := os.CopyFS(work, files); err != nil {
		return fmt.Errorf("init repository: copy files: %w", err)
	}
	steps := [][]string{
		{"init", "-q", "--bare", "-b", branch, building},
		{"init", "-q", "-b", branch},
		{"add", "-A"},
		{"-c", "user.name=windforce", "-c", "user.email=windforce@localhost", "commit", "-q", "-m", message},
		{"push", "-q", building, "HEAD:refs/heads/" + branch},
	}
	for _, args := range steps {
		if _, err := g.run(ctx, work, args...); err != nil {
			return fmt.Errorf("init repository %s: %w", bare, err)
		}
	}
	if err := os.Rename(building, bare); err != nil {
		return fmt.Errorf("init repository %s: %w", bare, err)
	}
	return nil
}
