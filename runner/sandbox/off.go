package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// startOff runs spec unsandboxed: the worker's user, its whole view of
// the host, no limits. The tree is its process group plus every process
// whose environment carries spec.Marker (children that setsid or
// double-fork away from the group); only a process that does both and
// replaces its environment escapes, which is one of the things
// --sandbox=off gives up.
func (s *Sandbox) startOff(spec Spec) (*Process, error) {
	cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
	cmd.Env, cmd.Dir = spec.Env, spec.Dir
	cmd.Stdout, cmd.Stderr = spec.Stdout, spec.Stderr
	cmd.ExtraFiles = extraFiles(spec.ExtraFiles)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Argv[0], err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{}), limits: spec.Limits,
		tree: newTreeMarks(cmd.Process.Pid, spec.Marker)}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

// treeMarks finds an unsandboxed tree: its process group and its marker.
type treeMarks struct {
	pgid   int
	marker []byte // "NAME=value\x00" as it appears in environ; nil: none
}

func newTreeMarks(pgid int, marker string) *treeMarks {
	m := &treeMarks{pgid: pgid}
	if marker != "" {
		m.marker = []byte(marker + "\x00")
	}
	return m
}

// members lists the live (not zombie) processes of the tree.
func (m *treeMarks) members() []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		pgrp, zombie, ok := procStat(pid)
		if ok && !zombie && (pgrp == m.pgid || m.hasMarker(pid)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func (m *treeMarks) hasMarker(pid int) bool {
	if m.marker == nil {
		return false
	}
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
func (m *treeMarks) signal(sig syscall.Signal) int {
	_ = syscall.Kill(-m.pgid, sig)
	pids := m.members()
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
	return len(pids)
}

// kill ends the tree: SIGTERM, up to grace for it to exit, then SIGKILL,
// repeated until nothing is left (a double fork may race the first
// sweep). It returns as soon as the tree is gone.
func (m *treeMarks) kill(grace time.Duration) {
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
func (m *treeMarks) waitGone(deadline time.Time) bool {
	for {
		if len(m.members()) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond) // polling /proc: there is no event to wait on
	}
}
