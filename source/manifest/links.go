package manifest

import (
	"errors"
	"path"
	"strings"
)

// maxLinkHops is the kernel's limit on symbolic links followed in one path
// walk (MAXSYMLINKS): past it, open fails with ELOOP. A chain that long is
// refused, so no link of an accepted tree fails that way on a worker.
const maxLinkHops = 40

// maxLinkTarget is the longest target the kernel will store (PATH_MAX
// less its terminating NUL); a longer one could not be written to disk.
// It also bounds the work one link costs the resolver.
const maxLinkTarget = 4095

// errLoop is a link whose resolution needs more than maxLinkHops links,
// which is every loop.
var errLoop = errors.New("symbolic link loop or chain too long")

// errTooDeep cuts a resolution nested more than maxLinkHops links deep.
// It means errLoop for the walk that started it, but says nothing about
// the inner links it stopped in, so it is never memoized.
var errTooDeep = errors.New("symbolic link chain nested too deep")

// escapeError is a resolution that left the tree: Via is the link whose
// target was absolute or whose ".." stepped above the root.
type escapeError struct{ Via string }

func (e *escapeError) Error() string { return "symbolic link " + e.Via + " leads outside the tree" }

// resolved is the outcome of following one link: where it ends (a tree
// path, "" for the root) and how many links that took, itself included.
type resolved struct {
	dest string
	hops int
	err  error
}

// resolver follows paths through a tree's symbolic links the way the
// kernel's path walk does: a relative target resolves against the link's
// directory, ".." pops one component, an absolute target is outside by
// definition, a link met in the middle or at the end of a path is
// followed. It is stricter than the kernel in one way only: a missing name
// or a regular file met before the last component is walked through by
// name (where the kernel would fail with ENOENT or ENOTDIR), so a ".."
// after it still counts, and a path that would climb out by name is
// refused too. A resolution that is above the root at any step is outside,
// even if later components would come back in: where it would come back
// depends on the directory the tree is copied to, which the tree does not
// know.
type resolver struct {
	tree Tree
	// done memoizes each link's resolution: it depends only on the link's
	// place and target, never on the path that reached it.
	done map[string]resolved
	// active are the links being resolved, innermost last; meeting one of
	// them again is a loop.
	active []string
}

func newResolver(t Tree) *resolver {
	return &resolver{tree: t, done: make(map[string]resolved)}
}

// link resolves the symbolic link at tree path p.
func (r *resolver) link(p string) resolved {
	if res, ok := r.done[p]; ok {
		return res
	}
	for _, a := range r.active {
		if a == p {
			return resolved{err: errLoop}
		}
	}
	if len(r.active) >= maxLinkHops {
		return resolved{err: errTooDeep}
	}
	r.active = append(r.active, p)
	res := r.follow(p)
	r.active = r.active[:len(r.active)-1]
	if !errors.Is(res.err, errTooDeep) {
		r.done[p] = res
	}
	return res
}

// follow walks link p's target from p's directory.
func (r *resolver) follow(p string) resolved {
	target := string(r.tree[p].Data)
	if !usableTarget(target) || strings.HasPrefix(target, "/") {
		return resolved{err: &escapeError{Via: p}}
	}
	dir := path.Dir(p)
	if dir == "." {
		dir = ""
	}
	dest, hops, err := r.walk(dir, target, 1, p)
	return resolved{dest: dest, hops: hops, err: err}
}

// walk resolves rel component by component from the tree directory dir,
// hops links already followed; via is the link rel came from ("" for a
// path named in the manifest), blamed when a ".." climbs above the root.
func (r *resolver) walk(dir, rel string, hops int, via string) (string, int, error) {
	cur := dir
	for _, name := range strings.Split(rel, "/") {
		switch name {
		case "", ".":
			continue
		case "..":
			if cur == "" {
				return "", hops, &escapeError{Via: via}
			}
			cur = parent(cur)
			continue
		}
		cur = child(cur, name)
		if f, ok := r.tree[cur]; !ok || !f.IsSymlink() {
			continue
		}
		res := r.link(cur)
		if res.err != nil {
			return "", hops, res.err
		}
		if hops += res.hops; hops > maxLinkHops {
			return "", hops, errLoop
		}
		cur = res.dest
	}
	return cur, hops, nil
}

// usableTarget refuses targets no git checkout on Linux would write as a
// plain relative link: empty, with a NUL or a backslash (a separator on
// Windows), or too long to store.
func usableTarget(t string) bool {
	return t != "" && len(t) <= maxLinkTarget && !strings.ContainsAny(t, "\\\x00")
}

// parent is the directory above tree path p ("" is the root).
func parent(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// child is name inside tree directory dir.
func child(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
