package manifest

import (
	"errors"
	"io/fs"
	"path"
	"strings"

	"github.com/windforce/windforce/objectcache"
)

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

// CheckTree refuses paths that are not clean relative paths or that
// repeat, paths under a symbolic link or a file (git never writes one, and
// a copy of the tree would write through the link), and symbolic links
// that lead outside the tree: a worker copies the tree as it is, and a
// link to /etc or ../../ would read the machine's files. Each link is
// followed as the kernel would follow it, through the other links of the
// tree (see resolver), so a chain of links that each look inside (dot -> .,
// up -> dot/..) is refused too, and so is a loop or a chain of more than 40
// links.
func CheckTree(files []objectcache.File) error {
	var ps problems
	tree := make(Tree, len(files))
	var unique []objectcache.File
	for _, f := range files {
		if !fs.ValidPath(f.Path) || f.Path == "." {
			ps.add(f.Path, "", "path is not a clean relative path inside the repository")
			continue
		}
		if _, dup := tree[f.Path]; dup {
			// The cache would refuse it too; checked here so that the
			// links are resolved against the one tree that gets written.
			ps.add(f.Path, "", "path appears twice in the tree")
			continue
		}
		tree[f.Path] = f
		unique = append(unique, f)
	}
	r := newResolver(tree)
	for _, f := range unique {
		checkParents(tree, f.Path, &ps)
		if f.IsSymlink() {
			checkLink(r, f, &ps)
		}
	}
	return ps.err()
}

// checkParents refuses a path whose parent directory is in the tree as a
// file or a link.
func checkParents(tree Tree, p string, ps *problems) {
	for dir := parent(p); dir != ""; dir = parent(dir) {
		if _, ok := tree[dir]; ok {
			ps.add(p, "", "path is inside %s, which is a file or a symbolic link, not a directory", dir)
			return
		}
	}
}

// checkLink reports a link that leads outside the tree or never ends.
func checkLink(r *resolver, f objectcache.File, ps *problems) {
	target := string(f.Data)
	if len(target) > maxLinkTarget {
		ps.add(f.Path, "", "symbolic link target is longer than %d bytes", maxLinkTarget)
		return
	}
	err := r.link(f.Path).err
	var esc *escapeError
	switch {
	case err == nil:
	case errors.As(err, &esc) && esc.Via == f.Path:
		ps.add(f.Path, "", "symbolic link points outside the repository (to %q); only links inside it are allowed", target)
	case errors.As(err, &esc):
		ps.add(f.Path, "", "symbolic link points outside the repository (to %q, through the link %s); only links inside it are allowed", target, esc.Via)
	default: // errLoop, or errTooDeep from this very link
		ps.add(f.Path, "", "symbolic link (to %q) forms a loop or a chain of more than %d links", target, maxLinkHops)
	}
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

// regular follows p through the tree's symbolic links, as the kernel
// would, to a regular file.
func (t Tree) regular(p string) (objectcache.File, bool) {
	dest, _, err := newResolver(t).walk("", p, 0, "")
	if err != nil {
		return objectcache.File{}, false
	}
	f, ok := t[dest]
	return f, ok && f.Mode.IsRegular()
}
