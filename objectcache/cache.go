package objectcache

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// Marker is the file whose presence makes a commit's tree complete. It is
// written last and is never part of a tree's files.
const Marker = ".windforce_clone_complete"

// Key names one commit's tree: {workspace}/{source}/{commit}.
type Key struct {
	Workspace string
	Source    string
	Commit    string
}

// String is the key as a path, {workspace}/{source}/{commit}.
func (k Key) String() string { return k.Workspace + "/" + k.Source + "/" + k.Commit }

// Validate refuses a key part that is empty or could step out of its
// directory.
func (k Key) Validate() error {
	for _, part := range []struct{ name, v string }{
		{"workspace", k.Workspace}, {"source", k.Source}, {"commit", k.Commit},
	} {
		if part.v == "" || part.v == "." || part.v == ".." || strings.ContainsAny(part.v, "/\\\x00") ||
			strings.HasPrefix(part.v, ".") {
			return fmt.Errorf("object cache key %q: invalid %s %q", k.String(), part.name, part.v)
		}
	}
	return nil
}

// File is one entry of a tree. Path is slash-separated and relative to the
// tree's root. Mode carries the permission bits (0644 or 0755) and, for a
// symbolic link, fs.ModeSymlink with the link's target as Data.
type File struct {
	Path string
	Mode fs.FileMode
	Data []byte
}

// IsSymlink reports whether f is a symbolic link.
func (f File) IsSymlink() bool { return f.Mode&fs.ModeSymlink != 0 }

// Cache stores complete commit trees. Implementations are safe for
// concurrent use, also by many processes at once on one backend.
type Cache interface {
	// Put writes every file of the tree, then the marker last. It is a
	// no-op when the commit is already complete, so a commit is never
	// rewritten; a leftover incomplete tree is replaced.
	Put(ctx context.Context, key Key, files []File) error
	// Has reports whether the commit's tree is complete (marker present).
	Has(ctx context.Context, key Key) (bool, error)
	// Get returns the files of a complete tree, sorted by path. A tree
	// without its marker, or no tree at all, is an *IncompleteError.
	Get(ctx context.Context, key Key) ([]File, error)
}

// ErrIncomplete is matched (errors.Is) by every *IncompleteError.
var ErrIncomplete = errors.New("commit tree is not complete in the object cache")

// IncompleteError is a read of a tree whose marker is missing.
type IncompleteError struct {
	Key Key
	// Partial is true when some of the tree is there (a write that
	// stopped before its marker), false when nothing is.
	Partial bool
}

// Error says which commit and what is missing.
func (e *IncompleteError) Error() string {
	if e.Partial {
		return fmt.Sprintf("%s: %v: the tree has no %s marker (a sync stopped before it finished)", e.Key, ErrIncomplete, Marker)
	}
	return fmt.Sprintf("%s: %v: no tree", e.Key, ErrIncomplete)
}

// Is makes errors.Is(err, ErrIncomplete) true.
func (e *IncompleteError) Is(target error) bool { return target == ErrIncomplete }

// CheckFiles refuses a tree a backend could not store faithfully: paths
// that are not clean relative slash paths, that repeat, or that are the
// marker itself.
func CheckFiles(files []File) error {
	seen := make(map[string]bool, len(files))
	for _, f := range files {
		if !fs.ValidPath(f.Path) || f.Path == "." || path.Clean(f.Path) != f.Path {
			return fmt.Errorf("object cache: invalid path %q", f.Path)
		}
		if path.Base(f.Path) == Marker {
			return fmt.Errorf("object cache: path %q is reserved for the completion marker", f.Path)
		}
		if seen[f.Path] {
			return fmt.Errorf("object cache: path %q appears twice", f.Path)
		}
		seen[f.Path] = true
	}
	return nil
}

// BeforeMarkerFunc is a test hook called after every file of a tree is
// written and before its marker; an error stops Put there, as a crash
// would.
type BeforeMarkerFunc func(ctx context.Context, key Key) error
