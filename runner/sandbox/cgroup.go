package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// cgroups is where a worker's job cgroups live: one directory
// windforce-<pid>-<n> beneath the worker's own cgroup, in the unified (v2)
// hierarchy when it has the memory and pids controllers, otherwise in
// each v1 hierarchy that has them (memory and pids required, cpu used
// when mounted). A job's processes cannot leave: the files that move a
// process belong to root and /sys is not mounted in the sandbox.
type cgroups struct {
	v2 bool
	// favordynmods: some cgroup mount has it, which makes moving a
	// process cheap (the kernel's threadgroup lock is global).
	favordynmods bool
	// roots by controller: "memory", "pids", "cpu" (v1: one hierarchy
	// each, possibly shared; v2: the same directory for all three).
	roots map[string]string
}

// findCgroups sets up the worker's cgroup for jobs, or says why it
// cannot: without memory and pids limits the sandbox is not enforced.
func findCgroups() (*cgroups, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, err
	}
	own, err := ownCgroups()
	if err != nil {
		return nil, err
	}
	if cg, err := unified(mounts, own); err == nil {
		return cg, nil
	} else if v1, err1 := legacy(mounts, own); err1 == nil {
		v1.favordynmods = slices.ContainsFunc(mounts, func(m cgroupMount) bool { return slices.Contains(m.options, "favordynmods") })
		return v1, nil
	} else {
		return nil, fmt.Errorf("sandbox: no cgroup with memory and pids controllers: v2: %v; v1: %v", err, err1)
	}
}

// cgroupMount is one cgroup filesystem: its mount point and, for v1, the
// controllers it carries.
type cgroupMount struct {
	dir         string
	v2          bool
	controllers []string
	options     []string // super options
}

func cgroupMounts() ([]cgroupMount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	defer f.Close()
	var out []cgroupMount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(tail) < 3 {
			continue
		}
		opts := strings.Split(tail[2], ",")
		switch tail[0] {
		case "cgroup2":
			out = append(out, cgroupMount{dir: fields[4], v2: true, options: opts})
		case "cgroup":
			out = append(out, cgroupMount{dir: fields[4], controllers: opts, options: opts})
		}
	}
	return out, sc.Err()
}

// ownCgroups maps "" (v2) or a v1 controller to this process's path.
func ownCgroups() (map[string]string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, nil
}

func unified(mounts []cgroupMount, own map[string]string) (*cgroups, error) {
	i := slices.IndexFunc(mounts, func(m cgroupMount) bool { return m.v2 })
	path, ok := own[""]
	if i < 0 || !ok {
		return nil, errors.New("no cgroup2 mount")
	}
	base := filepath.Join(mounts[i].dir, path)
	data, err := os.ReadFile(filepath.Join(base, "cgroup.controllers"))
	if err != nil {
		return nil, err
	}
	have := strings.Fields(string(data))
	if !slices.Contains(have, "memory") || !slices.Contains(have, "pids") {
		return nil, fmt.Errorf("%s has controllers %q, not memory and pids", base, have)
	}
	want := "+memory +pids"
	if slices.Contains(have, "cpu") {
		want += " +cpu"
	}
	if err := enableControllers(base, want); err != nil {
		return nil, err
	}
	dir, err := workerDir(base)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(want), 0); err != nil {
		return nil, fmt.Errorf("enable %s in %s: %w", want, dir, err)
	}
	roots := map[string]string{"memory": dir, "pids": dir}
	if strings.Contains(want, "cpu") {
		roots["cpu"] = dir
	}
	return &cgroups{v2: true, roots: roots}, nil
}

// enableControllers turns controllers on for base's children. A cgroup
// that holds processes cannot (cgroup v2's "no internal processes"), so
// the worker first moves itself into a leaf of its own beside the jobs.
func enableControllers(base, want string) error {
	ctl := filepath.Join(base, "cgroup.subtree_control")
	err := os.WriteFile(ctl, []byte(want), 0)
	if !errors.Is(err, syscall.EBUSY) {
		if err != nil {
			return fmt.Errorf("enable %s in %s: %w", want, base, err)
		}
		return nil
	}
	leaf := filepath.Join(base, fmt.Sprintf("windforce-worker-%d", os.Getpid()))
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create %s: %w", leaf, err)
	}
	for _, pid := range procsOf(base) {
		_ = os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
	}
	if err := os.WriteFile(ctl, []byte(want), 0); err != nil {
		return fmt.Errorf("enable %s in %s (after moving the worker to %s): %w", want, base, leaf, err)
	}
	return nil
}

func legacy(mounts []cgroupMount, own map[string]string) (*cgroups, error) {
	roots := map[string]string{}
	for _, c := range []string{"memory", "pids", "cpu"} {
		i := slices.IndexFunc(mounts, func(m cgroupMount) bool { return slices.Contains(m.controllers, c) })
		path, ok := own[c]
		if i < 0 || !ok {
			if c == "cpu" {
				continue
			}
			return nil, fmt.Errorf("no v1 %s hierarchy", c)
		}
		dir, err := workerDir(filepath.Join(mounts[i].dir, path))
		if err != nil {
			return nil, err
		}
		roots[c] = dir
	}
	return &cgroups{roots: roots}, nil
}

// sandboxes numbers the Sandboxes of this process (tests run many).
var sandboxes atomic.Int64

// workerDir creates base/windforce-<pid>-<n> after removing the job cgroups
// of workers that are gone (a cgroup with processes cannot be removed:
// their trees are killed first).
func workerDir(base string) (string, error) {
	old, _ := filepath.Glob(filepath.Join(base, "windforce-*"))
	for _, d := range old {
		num, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), "windforce-"), "-")
		pid, err := strconv.Atoi(num)
		if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
			continue
		}
		subs, _ := filepath.Glob(filepath.Join(d, "*", "cgroup.procs"))
		for _, s := range subs {
			(&jobCgroup{dirs: []string{filepath.Dir(s)}}).destroy()
		}
		_ = os.Remove(d)
	}
	dir := filepath.Join(base, fmt.Sprintf("windforce-%d-%d", os.Getpid(), sandboxes.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("cgroup %s is not writable: %w", base, err)
	}
	return dir, nil
}

// describe names the cgroup version and controllers, for the start line.
func (c *cgroups) describe() string {
	var cs []string
	for _, k := range []string{"memory", "pids", "cpu"} {
		if c.roots[k] != "" {
			cs = append(cs, k)
		}
	}
	v := "v1"
	if c.v2 {
		v = "v2"
	}
	return fmt.Sprintf("cgroup %s (%s)", v, strings.Join(cs, ", "))
}

// remove deletes the worker's job cgroup directories (empty by then).
func (c *cgroups) remove() {
	for _, d := range c.roots {
		_ = os.Remove(d)
	}
}

// jobCgroup is one process tree's cgroup: one directory (v2) or one per
// v1 hierarchy; pids lists members from the first.
type jobCgroup struct {
	v2     bool
	dirs   []string
	memory string // the directory holding the memory files
	files  cgroupFiles
}

// create makes the job's cgroup and writes its limits.
func (c *cgroups) create(name string, l Limits) (*jobCgroup, error) {
	jc := &jobCgroup{v2: c.v2}
	seen := map[string]bool{}
	for _, k := range []string{"pids", "memory", "cpu"} {
		root := c.roots[k]
		// Without a CPU limit the cpu hierarchy is not joined: each
		// hierarchy joined is one more migration at every start.
		if root == "" || seen[root] || (k == "cpu" && l.CPU <= 0) {
			continue
		}
		seen[root] = true
		d := filepath.Join(root, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			jc.destroy()
			return nil, fmt.Errorf("sandbox: create cgroup: %w", err)
		}
		jc.dirs = append(jc.dirs, d)
	}
	jc.memory = filepath.Join(c.roots["memory"], name)
	if err := jc.limit(c, name, l); err != nil {
		jc.destroy()
		return nil, err
	}
	return jc, nil
}

func (jc *jobCgroup) limit(c *cgroups, name string, l Limits) error {
	dir := func(k string) string { return filepath.Join(c.roots[k], name) }
	type setting struct{ dir, file, value string }
	var ss []setting
	mem := strconv.FormatInt(l.Memory, 10)
	if c.v2 {
		if l.Memory > 0 {
			ss = append(ss, setting{dir("memory"), "memory.max", mem}, setting{dir("memory"), "memory.swap.max", "0"})
		}
		if l.Pids > 0 {
			ss = append(ss, setting{dir("pids"), "pids.max", strconv.Itoa(l.Pids)})
		}
		if l.CPU > 0 && c.roots["cpu"] != "" {
			ss = append(ss, setting{dir("cpu"), "cpu.max", fmt.Sprintf("%d 100000", int64(l.CPU*100000))})
		}
	} else {
		if l.Memory > 0 {
			// memsw (memory + swap) exists only with swap accounting; the
			// memory limit must be set first, it may not exceed memsw.
			ss = append(ss, setting{dir("memory"), "memory.limit_in_bytes", mem}, setting{dir("memory"), "memory.memsw.limit_in_bytes", mem})
		}
		if l.Pids > 0 {
			ss = append(ss, setting{dir("pids"), "pids.max", strconv.Itoa(l.Pids)})
		}
		if l.CPU > 0 && c.roots["cpu"] != "" {
			ss = append(ss, setting{dir("cpu"), "cpu.cfs_period_us", "100000"}, setting{dir("cpu"), "cpu.cfs_quota_us", strconv.FormatInt(int64(l.CPU*100000), 10)})
		}
	}
	for _, s := range ss {
		err := os.WriteFile(filepath.Join(s.dir, s.file), []byte(s.value), 0)
		if err != nil && !(errors.Is(err, os.ErrNotExist) && strings.Contains(s.file, "sw")) {
			return fmt.Errorf("sandbox: set %s=%s: %w", s.file, s.value, err)
		}
	}
	return nil
}

// add moves pid into the job's cgroup (every hierarchy).
func (jc *jobCgroup) add(pid int) error {
	for _, d := range jc.dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("sandbox: join cgroup %s: %w", d, err)
		}
	}
	return nil
}

// pids lists the processes in the job's cgroup. cgroup.procs is opened
// for every read: on cgroup v1 an open file keeps the pid list it loaded
// (cgroupFiles would read it stale).
func (jc *jobCgroup) pids() []int { return procsOf(jc.dirs[0]) }

func procsOf(dir string) []int {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// kill SIGKILLs every member (cgroup.kill on v2, each pid on v1).
func (jc *jobCgroup) kill() {
	if jc.v2 && os.WriteFile(filepath.Join(jc.dirs[0], "cgroup.kill"), []byte("1"), 0) == nil {
		return
	}
	for _, pid := range jc.pids() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// oomKilled reports whether the kernel killed a member for memory.
func (jc *jobCgroup) oomKilled() bool {
	file := "memory.oom_control" // v1: "oom_kill N"
	if jc.v2 {
		file = "memory.events"
	}
	data, err := jc.files.read(filepath.Join(jc.memory, file))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if n, ok := strings.CutPrefix(line, "oom_kill "); ok {
			return strings.TrimSpace(n) != "0"
		}
	}
	return false
}

// destroy kills what is left and removes the directories.
func (jc *jobCgroup) destroy() {
	for range 100 {
		if len(jc.dirs) == 0 || len(jc.pids()) == 0 {
			break
		}
		jc.kill()
		waitEmpty(jc)
	}
	jc.files.close()
	for _, d := range jc.dirs {
		_ = os.Remove(d)
	}
}
