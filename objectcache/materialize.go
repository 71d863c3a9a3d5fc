package objectcache

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Materialize copies a complete tree from c into dir (a worker's local
// per-commit copy), with the same rule as the cache: the files go to a
// temporary directory beside dir, the marker last, and the directory is
// renamed into place. A dir that already has its marker is left alone, so
// many jobs of one commit share one copy. A tree without its marker in c
// is an *IncompleteError and nothing is written.
func Materialize(ctx context.Context, c Cache, key Key, dir string) error {
	if _, err := os.Lstat(filepath.Join(dir, Marker)); err == nil {
		return nil
	}
	files, err := c.Get(ctx, key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("materialize %s: %w", key, err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".tmp-"+filepath.Base(dir)+"-")
	if err != nil {
		return fmt.Errorf("materialize %s: %w", key, err)
	}
	defer os.RemoveAll(tmp) //nolint:errcheck // gone after the rename
	w := &FileCache{}
	if err := w.writeTree(ctx, key, tmp, files); err != nil {
		return fmt.Errorf("materialize %s: %w", key, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Lstat(filepath.Join(dir, Marker)); statErr == nil {
			return nil // another job of this commit won the race
		}
		if errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ENOTEMPTY) {
			return fmt.Errorf("materialize %s: %s exists without a marker; remove it", key, dir)
		}
		return fmt.Errorf("materialize %s: %w", key, err)
	}
	return nil
}
