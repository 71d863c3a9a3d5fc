package runner

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Where cgroup v2 is writable (a pure v2 host, or the "unified" mount of a
// hybrid one), each job also gets its own cgroup: the shim moves itself in
// before starting the job, so every descendant is in it whatever it does
// (setsid, double fork, a cleared environment), and the stop uses
// cgroup.kill. The worker's jobs live under one cgroup of its own,
// windforce-<pid>, beneath the worker's cgroup. Without a writable cgroup
// v2 the process group and the WF_JOB_ID marker are used alone.

// cgroupEnv passes the job's cgroup directory to the shim.
const cgroupEnv = "WF_RUNNER_CGROUP"

// setupCgroups returns the worker's cgroup for jobs, or "" and why not.
func setupCgroups() (string, error) {
	mount, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	rel, err := ownCgroup()
	if err != nil {
		return "", err
	}
	base := filepath.Join(mount, rel)
	sweepStaleCgroups(base)
	dir := filepath.Join(base, fmt.Sprintf("windforce-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("cgroup v2 at %s is not writable: %w", base, err)
	}
	return dir, nil
}

// cgroup2Mount finds the cgroup2 mount point in /proc/self/mountinfo.
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields := strings.Fields(pre)
		if ok && strings.HasPrefix(post, "cgroup2 ") && len(fields) >= 5 {
			return fields[4], nil
		}
	}
	return "", errors.New("no cgroup v2 mount")
}

// ownCgroup is this process's cgroup v2 path ("0::/path").
func ownCgroup() (string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			return rest, nil
		}
	}
	return "", errors.New("process has no cgroup v2 path")
}

// sweepStaleCgroups removes the job cgroups of workers that are gone.
// A cgroup that still has processes is not removable, so this is safe.
func sweepStaleCgroups(base string) {
	dirs, _ := filepath.Glob(filepath.Join(base, "windforce-*"))
	for _, d := range dirs {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "windforce-"))
		if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
			continue
		}
		subs, _ := filepath.Glob(filepath.Join(d, "*", "cgroup.procs"))
		for _, s := range subs {
			_ = os.Remove(filepath.Dir(s))
		}
		_ = os.Remove(d)
	}
}

// newJobCgroup creates the cgroup of one job attempt under root.
func newJobCgroup(root, name string) (string, error) {
	if root == "" {
		return "", nil
	}
	dir := filepath.Join(root, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("create job cgroup: %w", err)
	}
	return dir, nil
}

// joinCgroup moves the calling process into dir (the shim does this
// before it starts the job).
func joinCgroup(dir string) error {
	return os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0o644)
}

// cgroupPids lists the processes in dir.
func cgroupPids(dir string) []int {
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

// cgroupKill SIGKILLs everything in dir at once (cgroup.kill, Linux 5.14+).
func cgroupKill(dir string) {
	_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0o644)
}

// removeCgroup deletes an empty job cgroup.
func removeCgroup(dir string) {
	if dir != "" {
		_ = os.Remove(dir)
	}
}
