package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// systemDirs are shown read-only to every job: what runtimes, shells and
// TLS need. Everything else of the host (/home, /root, /var, /run, /srv,
// /mnt, /sys, …) is absent; a runtime installed elsewhere is added per
// job (Spec.ReadOnly) from its resolved path.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix"}

// devices are bound from the host's /dev; nothing else of it is visible.
var devices = []string{"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom"}

// systemBinds computes the bwrap arguments for systemDirs once: a merged
// /usr's /bin → usr/bin stays a symlink, directories are bound.
func systemBinds() []string {
	var args []string
	for _, d := range systemDirs {
		info, err := os.Lstat(d)
		switch {
		case err != nil:
		case info.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				args = append(args, "--symlink", target, d)
			}
		case info.IsDir():
			args = append(args, "--ro-bind", d, d)
		}
	}
	// resolv.conf is often a link into /run (systemd-resolved): show the
	// directory it points to, or jobs could not resolve names.
	if target, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && !under(target, systemDirs) {
		args = append(args, "--ro-bind-try", filepath.Dir(target), filepath.Dir(target))
	}
	args = append(args, "--perms", "0755", "--dir", "/dev")
	for _, d := range devices {
		args = append(args, "--dev-bind-try", d, d)
	}
	return append(args,
		"--symlink", "/proc/self/fd", "/dev/fd",
		"--symlink", "/proc/self/fd/0", "/dev/stdin",
		"--symlink", "/proc/self/fd/1", "/dev/stdout",
		"--symlink", "/proc/self/fd/2", "/dev/stderr",
		"--proc", "/proc")
}

// under reports whether p is one of dirs or inside one.
func under(p string, dirs []string) bool {
	return slices.ContainsFunc(dirs, func(d string) bool { return p == d || strings.HasPrefix(p, d+"/") })
}

// bwrapArgs is the whole bwrap command line of spec for job uid uid:
// namespaces, mounts, then the job. Started directly as uid (see
// Sandbox.direct), bwrap maps it into its user namespace itself, forbids
// nested ones, and blocks on blockFD (when it is not -1) until the
// worker has moved its child into the job's cgroup. Otherwise it waits on
// blockFD for the worker's uid maps, and setpriv drops to uid last.
func (s *Sandbox) bwrapArgs(spec Spec, uid uint32, direct bool, infoFD, blockFD int) []string {
	args := []string{s.cfg.Bwrap,
		"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--info-fd", strconv.Itoa(infoFD), "--die-with-parent", "--new-session", "--hostname", "windforce-job",
	}
	switch {
	case !direct:
		args = append(args, "--userns-block-fd", strconv.Itoa(blockFD))
	case blockFD >= 0:
		args = append(args, "--disable-userns", "--block-fd", strconv.Itoa(blockFD))
	default:
		args = append(args, "--disable-userns")
	}
	args = append(args, s.system...)
	// /tmp first: spec paths below the host's /tmp are shown over it.
	if spec.Tmp != "" {
		args = append(args, "--bind", spec.Tmp, "/tmp")
	} else {
		args = append(args, "--perms", "1777", "--tmpfs", "/tmp")
	}
	made := map[string]bool{"/": true, "/tmp": true}
	for _, d := range spec.ReadOnly {
		if !under(d, systemDirs) && !under(d, s.cfg.Hide) {
			args = append(append(args, parents(d, made)...), "--ro-bind", d, d)
		}
	}
	for _, d := range s.cfg.Shared {
		args = append(append(args, parents(d, made)...), "--bind", d, d)
	}
	args = append(args, s.hidden(spec, made)...)
	if spec.Dir != "" {
		args = append(args, "--chdir", spec.Dir)
	}
	if direct {
		return append(append(args, "--"), spec.Argv...)
	}
	id := strconv.FormatUint(uint64(uid), 10)
	return append(append(args, "--", s.cfg.Setpriv, "--reuid="+id, "--regid="+id, "--clear-groups",
		"--bounding-set=-all", "--inh-caps=-all", "--"), spec.Argv...)
}

// hidden covers each Hide directory with an empty tmpfs, then shows the
// spec's paths inside it: the directories on the way are created
// searchable (bwrap would copy the host's 0700) but list nothing else.
func (s *Sandbox) hidden(spec Spec, made map[string]bool) []string {
	var args []string
	for _, h := range effectiveHides(s.cfg.Hide, spec) {
		args = append(append(args, parents(h, made)...), "--perms", "0755", "--tmpfs", h)
		made[h] = true
		show := func(flag, p string) {
			if under(p, []string{h}) {
				args = append(append(args, parents(p, made)...), flag, p, p)
			}
		}
		for _, p := range spec.ReadOnly {
			show("--ro-bind", p)
		}
		for _, p := range spec.Writable {
			show("--bind", p)
		}
	}
	for _, p := range spec.Writable {
		if !under(p, s.cfg.Hide) {
			args = append(append(args, parents(p, made)...), "--bind", p, p)
		}
	}
	return args
}

// effectiveHides is hide without what another entry already hides: a
// repeated directory, or one below another hidden directory and below no
// path the spec shows (the outer tmpfs shows only the spec's paths, so the
// inner one would hide nothing more). Each dropped entry saves bwrap a
// tmpfs and the spec's binds again — several mounts per job start, where
// the worker hides its dir and also the database and object cache inside it.
func effectiveHides(hide []string, spec Spec) []string {
	shown := slices.Concat(spec.ReadOnly, spec.Writable)
	var out []string
	for i, h := range hide {
		others := slices.Concat(hide[:i], hide[i+1:])
		repeated := slices.Contains(hide[:i], h)
		nested := slices.ContainsFunc(others, func(o string) bool { return o != h && under(h, []string{o}) })
		if repeated || nested && !slices.ContainsFunc(shown, func(p string) bool { return under(h, []string{p}) }) {
			continue
		}
		out = append(out, h)
	}
	return out
}

// parents creates p's missing ancestors searchable (bwrap would copy the
// host's modes, and a 0700 /root would make everything below unreachable
// for the job) and records them in made. System directories exist.
func parents(p string, made map[string]bool) []string {
	var todo []string
	for d := filepath.Dir(p); !made[d] && !under(d, systemDirs); d = filepath.Dir(d) {
		todo = append(todo, d)
	}
	var args []string
	for i := len(todo) - 1; i >= 0; i-- {
		made[todo[i]] = true
		args = append(args, "--perms", "0755", "--dir", todo[i])
	}
	return args
}
