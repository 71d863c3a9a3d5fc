package sandbox

import (
	"os"
	"path/filepath"
	"sync"
)

// A root worker starts bwrap in one of two ways. Directly as the job's
// uid when every path the job is shown can be reached by that uid (each
// parent directory searchable by others, as /var/lib/windforce is): bwrap
// then maps the uid into its user namespace itself, forbids nested user
// namespaces, and the job's command runs as bwrap's child with nothing in
// between. Otherwise (WINDFORCE_DIR below a 0700 /root, say) bwrap starts
// as the worker, sets up the mounts with the worker's file rights through
// uid 0 of a user namespace the worker maps, and setpriv drops to the
// job's uid before the command: about 2-3 ms more per start
// (docs/BENCHMARKS.md). Both give the job the same identity and view.

// searchCache remembers whether a directory's parents are searchable.
type searchCache struct {
	mu   sync.Mutex
	dirs map[string]bool
}

// reachable reports whether a process of another uid can reach p: every
// parent directory of p is searchable by others. p itself is the
// caller's to check (a job's writable paths are given to its uid).
func (c *searchCache) reachable(p string) bool {
	d := filepath.Dir(filepath.Clean(p))
	c.mu.Lock()
	defer c.mu.Unlock()
	if ok, seen := c.dirs[d]; seen {
		return ok
	}
	ok := true
	for x := d; ; x = filepath.Dir(x) {
		info, err := os.Stat(x)
		if err != nil || !info.IsDir() || info.Mode().Perm()&0o001 == 0 {
			ok = false
			break
		}
		if x == "/" {
			break
		}
	}
	if c.dirs == nil {
		c.dirs = map[string]bool{}
	}
	c.dirs[d] = ok
	return ok
}

// direct reports whether spec's bwrap may be started as the job's uid.
func (s *Sandbox) direct(spec Spec) bool {
	if s.ids.uid != 0 || s.noDirect {
		return false // a non-root worker maps subordinate ids through newuidmap
	}
	for _, list := range [][]string{spec.ReadOnly, spec.Writable, s.cfg.Shared, {spec.Tmp, spec.Dir}} {
		for _, p := range list {
			// Below a writable path the job's uid owns the way.
			if p != "" && !below(p, spec.Writable) && !s.search.reachable(p) {
				return false
			}
		}
	}
	for _, p := range append(spec.ReadOnly, s.cfg.Shared...) {
		if info, err := os.Stat(p); err != nil || info.Mode().Perm()&0o005 != 0o005 {
			return false
		}
	}
	return true
}

// below reports whether p is strictly inside one of dirs.
func below(p string, dirs []string) bool {
	for _, d := range dirs {
		if p != d && under(p, []string{d}) {
			return true
		}
	}
	return false
}
