package runner

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A job's process tree is found by up to three marks: the process group
// (Setpgid) holds everything that did not call setsid; the environment
// marker WF_JOB_ID=<id> (read from /proc/PID/environ) follows children
// that did setsid or double-forked away from the group and were
// reparented; and the job's cgroup (cgroup.go), where cgroup v2 is
// writable, holds every descendant whatever it did. The first two work
// on any Linux host without privileges (cgroup v1 and hybrid hosts
// included); only a process that both leaves the group and replaces its
// environment escapes them, which the cgroup closes where it exists.

// treeMarks identifies one job attempt's processes.
type treeMarks struct {
	pgid   int
	marker []byte // "WF_JOB_ID=<id>\x00" as it appears in environ
	cgroup string // the job's cgroup directory, when there is one
}

func newTreeMarks(pgid int, jobID string) treeMarks {
	return treeMarks{pgid: pgid, marker: []byte("WF_JOB_ID=" + jobID + "\x00")}
}

// members lists the live (not zombie) processes of the tree.
func (m treeMarks) members() []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	inCgroup := map[int]bool{}
	if m.cgroup != "" {
		for _, pid := range cgroupPids(m.cgroup) {
			inCgroup[pid] = true
		}
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		pgrp, zombie, ok := procStat(pid)
		if !ok || zombie {
			continue
		}
		if pgrp == m.pgid || inCgroup[pid] || m.hasMarker(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func (m treeMarks) hasMarker(pid int) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	return bytes.HasPrefix(env, m.marker) || bytes.Contains(env, append([]byte{0}, m.marker...))
}

// procStat reads a process's group and whether it is a zombie.
func procStat(pid int) (pgrp int, zombie, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false, false
	}
	// The command name is in parentheses and may contain spaces: fields
	// start after the last ')'. Then: state ppid pgrp ...
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return 0, false, false
	}
	pgrp, err = strconv.Atoi(f[2])
	return pgrp, f[0] == "Z" || f[0] == "X", err == nil
}

// signal sends sig to the group and to every marked process.
func (m treeMarks) signal(sig syscall.Signal) int {
	if sig == syscall.SIGKILL && m.cgroup != "" {
		cgroupKill(m.cgroup)
	}
	_ = syscall.Kill(-m.pgid, sig)
	pids := m.members()
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
	return len(pids)
}

// pollInterval is how often a kill checks whether the tree is gone.
const pollInterval = 20 * time.Millisecond

// kill ends the tree: SIGTERM, up to grace for it to exit, then SIGKILL,
// repeated until nothing is left (a double fork may race the first
// sweep). It returns as soon as the tree is gone.
func (m treeMarks) kill(grace time.Duration) {
	if m.signal(syscall.SIGTERM) == 0 {
		return
	}
	if m.waitGone(time.Now().Add(grace)) {
		return
	}
	deadline := time.Now().Add(2 * time.Second)
	for m.signal(syscall.SIGKILL) > 0 && time.Now().Before(deadline) {
		m.waitGone(time.Now().Add(100 * time.Millisecond))
	}
}

// waitGone polls until the tree has no live process or the deadline.
func (m treeMarks) waitGone(deadline time.Time) bool {
	for {
		if len(m.members()) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollInterval) // polling /proc: there is no event to wait on
	}
}

// procCmdline is a process's command line, for messages.
func procCmdline(pid int) string {
	data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strconv.Itoa(pid) + ":" + strings.TrimSpace(strings.ReplaceAll(string(data), "\x00", " "))
}
