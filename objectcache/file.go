package objectcache

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// FileCache keeps trees in a directory: {root}/{workspace}/{source}/{commit}/.
// A tree is written in a temporary directory beside its final place, marker
// last, and then renamed into place, so the final path holds either nothing
// or a whole tree. Many processes may share the directory (a network file
// system that keeps rename atomic).
type FileCache struct {
	root string
	// BeforeMarker, when set, runs after the files and before the marker
	// (tests simulate a crash with it).
	BeforeMarker BeforeMarkerFunc
}

var _ Cache = (*FileCache)(nil)

// NewFileCache returns a cache rooted at dir, creating dir when missing.
func NewFileCache(dir string) (*FileCache, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("object cache %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("object cache: create %s: %w", abs, err)
	}
	return &FileCache{root: abs}, nil
}

// SetBeforeMarker sets the test hook run between the files and the marker.
func (c *FileCache) SetBeforeMarker(fn BeforeMarkerFunc) { c.BeforeMarker = fn }

// Root is the cache's directory.
func (c *FileCache) Root() string { return c.root }

// dir is the final directory of a tree.
func (c *FileCache) dir(key Key) string {
	return filepath.Join(c.root, key.Workspace, key.Source, key.Commit)
}

// Dir returns the directory of a complete tree, for a reader that copies
// it as files; an *IncompleteError when its marker is missing.
func (c *FileCache) Dir(ctx context.Context, key Key) (string, error) {
	if err := c.mustBeComplete(key); err != nil {
		return "", err
	}
	return c.dir(key), nil
}

// Has reports whether the tree's marker is present.
func (c *FileCache) Has(_ context.Context, key Key) (bool, error) {
	if err := key.Validate(); err != nil {
		return false, err
	}
	fi, err := os.Lstat(filepath.Join(c.dir(key), Marker))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("object cache: check %s: %w", key, err)
	}
	return fi.Mode().IsRegular(), nil
}

// mustBeComplete returns an *IncompleteError unless the marker is there.
func (c *FileCache) mustBeComplete(key Key) error {
	ok, err := c.Has(context.Background(), key)
	if err != nil || ok {
		return err
	}
	_, statErr := os.Lstat(c.dir(key))
	return &IncompleteError{Key: key, Partial: statErr == nil}
}

// Get reads a complete tree, without its marker.
func (c *FileCache) Get(ctx context.Context, key Key) ([]File, error) {
	if err := c.mustBeComplete(key); err != nil {
		return nil, err
	}
	files, err := readTree(ctx, c.dir(key))
	if err != nil {
		return nil, fmt.Errorf("object cache: read %s: %w", key, err)
	}
	return files, nil
}

// readTree reads every regular file and symbolic link under root.
func readTree(ctx context.Context, root string) ([]File, error) {
	var files []File
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == Marker {
			return nil
		}
		f, err := readEntry(p, rel, d)
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, err
}

func readEntry(p, rel string, d fs.DirEntry) (File, error) {
	info, err := d.Info()
	if err != nil {
		return File{}, err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(p)
		if err != nil {
			return File{}, err
		}
		return File{Path: rel, Mode: fs.ModeSymlink | 0o777, Data: []byte(target)}, nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return File{}, err
	}
	return File{Path: rel, Mode: info.Mode().Perm(), Data: data}, nil
}

// Put writes the tree in a temporary directory, the marker last, and
// renames it into place. A complete tree is left alone; a leftover
// directory without a marker is replaced.
func (c *FileCache) Put(ctx context.Context, key Key, files []File) error {
	if err := key.Validate(); err != nil {
		return err
	}
	if err := CheckFiles(files); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	if ok, err := c.Has(ctx, key); err != nil || ok {
		return err
	}
	parent := filepath.Dir(c.dir(key))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("object cache: put %s: %w", key, err)
	}
	tmp, err := os.MkdirTemp(parent, ".tmp-"+key.Commit+"-")
	if err != nil {
		return fmt.Errorf("object cache: put %s: %w", key, err)
	}
	defer os.RemoveAll(tmp) //nolint:errcheck // gone after a successful rename
	if err := c.writeTree(ctx, key, tmp, files); err != nil {
		return fmt.Errorf("object cache: put %s: %w", key, err)
	}
	if err := c.publish(key, tmp); err != nil {
		return fmt.Errorf("object cache: put %s: %w", key, err)
	}
	return nil
}

// writeTree writes files, runs the hook, then writes the marker last.
func (c *FileCache) writeTree(ctx context.Context, key Key, dir string, files []File) error {
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := writeEntry(dir, f); err != nil {
			return fmt.Errorf("write %s: %w", f.Path, err)
		}
	}
	if c.BeforeMarker != nil {
		if err := c.BeforeMarker(ctx, key); err != nil {
			return fmt.Errorf("before marker: %w", err)
		}
	}
	if err := writeSynced(filepath.Join(dir, Marker), []byte(key.String()+"\n"), 0o644); err != nil {
		return fmt.Errorf("write marker: %w", err)
	}
	return nil
}

// publish renames the finished temporary tree into place. Losing a race
// with another writer of the same commit is success: commits are
// immutable, so its tree is the same.
func (c *FileCache) publish(key Key, tmp string) error {
	final := c.dir(key)
	if _, err := os.Lstat(final); err == nil {
		if ok, _ := c.Has(context.Background(), key); ok {
			return nil
		}
		// A leftover without marker (a crash of an older writer): move it
		// aside first, so the final path never shows a half tree.
		trash := tmp + ".old"
		if err := os.Rename(final, trash); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("move incomplete tree aside: %w", err)
		}
		defer os.RemoveAll(trash) //nolint:errcheck
	}
	if err := os.Rename(tmp, final); err != nil {
		if ok, _ := c.Has(context.Background(), key); ok {
			return nil
		}
		return fmt.Errorf("rename into place: %w", err)
	}
	return syncDir(filepath.Dir(final))
}

func writeEntry(dir string, f File) error {
	p := filepath.Join(dir, filepath.FromSlash(f.Path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if f.IsSymlink() {
		return os.Symlink(string(f.Data), p)
	}
	perm := f.Mode.Perm()
	if perm == 0 {
		perm = 0o644
	}
	return writeSynced(p, f.Data, perm)
}

// writeSynced writes a file and flushes it to disk, so the marker can
// never be durable before the files it vouches for.
func writeSynced(p string, data []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Chmod(p, perm) // the umask must not change the recorded mode
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
