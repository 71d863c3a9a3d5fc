package manifest

import (
	"io/fs"
	"path"
	"strings"

	"github.com/windforce/windforce/objectcache"
)

// maxLinkHops bounds symbolic-link chains when a manifest path is followed.
const maxLinkHops = 8

// Tree is a commit's files by path.
type Tree map[string]objectcache.File

// NewTree indexes files by path.
func NewTree(files []objectcache.File) Tree {
	t := make(Tree, len(files))
	for _, f := range files {
		t[f.Path] = f
	}
	return t
}

// CheckTree refuses paths that are not clean relative paths, and symbolic
// links whose target is absolute or leaves the tree: a worker copies the
// tree as it is, and a link to /etc or ../../ would read the machine's
// files.
func CheckTree(files []objectcache.File) error {
	var ps problems
	for _, f := range files {
		if !fs.ValidPath(f.Path) || f.Path == "." {
			ps.add(f.Path, "", "path is not a clean relative path inside the repository")
			continue
		}
		if f.IsSymlink() {
			if _, ok := linkTarget(f); !ok {
				ps.add(f.Path, "", "symbolic link points outside the repository (to %q); only links inside it are allowed", string(f.Data))
			}
		}
	}
	return ps.err()
}

// linkTarget is the tree path a link points to; false when it leaves the
// tree.
func linkTarget(f objectcache.File) (string, bool) {
	target := string(f.Data)
	if target == "" || strings.HasPrefix(target, "/") || strings.Contains(target, "\\") {
		return "", false
	}
	p := path.Join(path.Dir(f.Path), target)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	return p, true
}

// cleanRelPath checks a path written in the manifest: relative, inside the
// tree, no "..", no backslashes.
func cleanRelPath(p string) (string, bool) {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") {
		return "", false
	}
	c := path.Clean(p)
	if !fs.ValidPath(c) || c == "." {
		return "", false
	}
	return c, true
}

// regular follows symbolic links inside the tree to a regular file.
func (t Tree) regular(p string) (objectcache.File, bool) {
	for range maxLinkHops {
		f, ok := t[p]
		if !ok {
			return objectcache.File{}, false
		}
		if !f.IsSymlink() {
			return f, true
		}
		if p, ok = linkTarget(f); !ok {
			return objectcache.File{}, false
		}
	}
	return objectcache.File{}, false
}
