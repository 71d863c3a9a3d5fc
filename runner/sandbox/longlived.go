package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// What a long-lived tree (a warm runtime, DESIGN §7) needs beyond a job's:
// descriptors of its own, its memory figures between jobs, its main
// process, and the processes one job left behind killed while the main
// process lives on.

// ExtraFD is the descriptor the first of Spec.ExtraFiles has in the
// command, sandboxed or not (bwrap's info and block descriptors are 3
// and 4; with the sandbox off they are closed).
const ExtraFD = 5

// extraFiles places files at ExtraFD and up in an unsandboxed command.
func extraFiles(files []*os.File) []*os.File {
	if len(files) == 0 {
		return nil
	}
	return append(make([]*os.File, ExtraFD-3), files...)
}

// MemoryUsage is the tree's memory use now as its cgroup counts it (page
// cache of files it wrote included); false with the sandbox off.
func (p *Process) MemoryUsage() (int64, bool) {
	if p.cg == nil {
		return 0, false
	}
	file := "memory.usage_in_bytes"
	if p.cg.v2 {
		file = "memory.current"
	}
	data, err := p.cg.files.read(filepath.Join(p.cg.memory, file))
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	return n, err == nil
}

// Limits are the limits the tree runs under (filled and capped).
func (p *Process) Limits() Limits { return p.limits }

// OOMKilled reports whether the kernel has killed a member of the tree for
// exceeding its memory limit, while the tree lives on.
func (p *Process) OOMKilled() bool { return p.cg != nil && p.cg.oomKilled() }

// Main is the host pid of the command itself: bwrap's child in the job's
// namespaces (the outer bwrap and its init excluded), or the process
// started with the sandbox off. 0 when it is gone.
func (p *Process) Main() int {
	if p.tree != nil {
		return p.cmd.Process.Pid
	}
	for _, pid := range p.cg.pids() {
		if pid != p.outer && pid != p.init && parentOf(pid) == p.init {
			return pid
		}
	}
	return 0
}

// Members lists the tree's live processes as the host sees them.
func (p *Process) Members() []int {
	if p.tree != nil {
		return p.tree.members()
	}
	return p.cg.pids()
}

// KillOthers SIGKILLs every process of the tree but main (and bwrap's
// own): what a job of a long-lived tree left running dies with the job,
// as a job's leftovers die with its tree. It repeats while a dying
// process's children appear, a few rounds at most.
func (p *Process) KillOthers(main int) {
	for range 20 {
		var others []int
		for _, pid := range p.Members() {
			if pid != main && pid != p.outer && pid != p.init {
				others = append(others, pid)
			}
		}
		if len(others) == 0 {
			return
		}
		for _, pid := range others {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		for _, pid := range others {
			waitGone(pid)
		}
	}
}

// waitGone waits briefly for a SIGKILLed process to leave the cgroup
// (it is reaped by its parent, bwrap's init or the main process).
func waitGone(pid int) {
	for range 200 {
		if _, zombie, ok := procStat(pid); !ok || zombie {
			return
		}
		time.Sleep(500 * time.Microsecond) // no event tells when a process is gone
	}
}

// parentOf is a process's parent pid, 0 when unknown.
func parentOf(pid int) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}
