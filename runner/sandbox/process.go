package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// setupTimeout bounds how long bwrap may take to report its child.
const setupTimeout = 30 * time.Second

// Process is a started process tree. Wait for it exactly once; Stop may
// be called at any time, from any goroutine.
type Process struct {
	cmd    *exec.Cmd
	done   chan struct{} // closed when the first process has exited
	err    error         // cmd.Wait's error, read after done
	limits Limits

	// sandboxed trees
	cg          *jobCgroup
	outer, init int // bwrap's two processes, spared SIGTERM
	release     func()

	// unsandboxed trees
	tree *treeMarks

	stopOnce sync.Once
	waitOnce sync.Once
	exit     Exit
}

// Start launches spec and returns once the job's command is about to run.
func (s *Sandbox) Start(spec Spec) (*Process, error) {
	if len(spec.Argv) == 0 {
		return nil, errors.New("sandbox: empty command")
	}
	if s.cfg.Off {
		return s.startOff(spec)
	}
	spec.Limits = spec.Limits.Cap(s.cfg.Defaults, s.cfg.Max)
	uid, err := s.uids.acquire()
	if err != nil {
		return nil, err
	}
	p, err := s.startOn(spec, uid)
	if err != nil {
		s.uids.release(uid)
		return nil, err
	}
	p.release = func() { s.uids.release(uid) }
	return p, nil
}

func (s *Sandbox) startOn(spec Spec, uid uint32) (*Process, error) {
	for _, d := range spec.Writable {
		if err := chownTree(d, int(uid)); err != nil {
			return nil, fmt.Errorf("sandbox: give %s to the job: %w", d, err)
		}
	}
	cg, err := s.cg.create(spec.Name, spec.Limits)
	if err != nil {
		return nil, err
	}
	p, err := s.launch(spec, uid, cg)
	if err != nil {
		cg.destroy()
		return nil, err
	}
	return p, nil
}

// launch starts bwrap, which clones its child into new namespaces and
// waits; the worker writes the uid maps (and on cgroup v1 moves the child
// into the job's cgroup; on v2 bwrap is born there), and only then lets
// the child go on: nothing of the job ever runs outside its cgroup or
// with another identity.
func (s *Sandbox) launch(spec Spec, uid uint32, cg *jobCgroup) (*Process, error) {
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	defer infoR.Close()
	blockR, blockW, err := os.Pipe()
	if err != nil {
		infoW.Close()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	defer blockW.Close()
	direct := s.direct(spec)
	blockFD := 4
	if direct && cg.v2 {
		blockFD = -1 // born in its cgroup, mapped by bwrap: nothing to wait for
	}
	argv := s.bwrapArgs(spec, uid, direct, 3, blockFD)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = spec.Env, "/"
	cmd.Stdout, cmd.Stderr = spec.Stdout, spec.Stderr
	cmd.ExtraFiles = append([]*os.File{infoW, blockR}, spec.ExtraFiles...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if direct {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uid, Gid: uid, Groups: []uint32{}}
	}
	cmd.WaitDelay = time.Second
	if cg.v2 {
		// cgroup v2: bwrap is born in the job's cgroup (clone3 with
		// CLONE_INTO_CGROUP), so nothing is ever migrated.
		dir, err := os.Open(cg.dirs[0])
		if err != nil {
			infoW.Close()
			blockR.Close()
			return nil, fmt.Errorf("sandbox: open cgroup: %w", err)
		}
		defer dir.Close()
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, int(dir.Fd())
	}
	err = cmd.Start()
	infoW.Close()
	blockR.Close()
	if err != nil {
		return nil, fmt.Errorf("sandbox: start bwrap: %w", err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{}), limits: spec.Limits, cg: cg, outer: cmd.Process.Pid}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	ids := s.ids
	if direct {
		ids = idMapper{direct: true}
	}
	if err := p.admit(infoR, uid, ids); err != nil {
		_ = cmd.Process.Kill()
		<-p.done
		return nil, err
	}
	return p, nil
}

// admit reads bwrap's child pid, moves it into the cgroup (v1), maps the
// ids; launch then unblocks the child by closing blockW.
func (p *Process) admit(infoR *os.File, uid uint32, ids idMapper) error {
	_ = infoR.SetReadDeadline(time.Now().Add(setupTimeout))
	var info struct {
		Child int `json:"child-pid"`
	}
	if err := json.NewDecoder(infoR).Decode(&info); err != nil || info.Child <= 0 {
		select {
		case <-p.done:
			return fmt.Errorf("sandbox: bwrap failed to start the job (%v; its message is in the output)", p.err)
		case <-time.After(time.Second):
			return fmt.Errorf("sandbox: bwrap reported no child: %v", err)
		}
	}
	// cgroup v1: only the child is moved, everything of the job descends
	// from it; the outer bwrap stays outside (it only waits). A move is
	// the costliest step of a start on v1: the kernel waits for an RCU
	// grace period (5-20 ms) unless a cgroup mount has favordynmods.
	p.init = info.Child
	if !p.cg.v2 {
		if err := p.cg.add(p.init); err != nil {
			return err
		}
	}
	return ids.write(p.init, uid)
}

// Done is closed when the tree's first process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the first process, then for nothing of the tree to be
// left (what a finished job left running is killed), and says how it
// ended. The cgroup and the job uid are released before it returns.
func (p *Process) Wait() Exit {
	p.waitOnce.Do(func() {
		<-p.done
		p.exit = exitOf(p.cmd, p.err)
		p.exit.Memory = p.limits.Memory
		if p.tree != nil {
			p.tree.kill(0)
			return
		}
		p.exit.OOM = p.cg.oomKilled()
		p.cg.destroy()
		p.release()
	})
	return p.exit
}

// exitOf turns cmd.Wait's outcome into an Exit.
func exitOf(cmd *exec.Cmd, err error) Exit {
	st := cmd.ProcessState
	if st == nil {
		return Exit{Code: -1, Err: err}
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return Exit{Code: 128 + int(ws.Signal())}
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return Exit{Code: st.ExitCode(), Err: err}
	}
	return Exit{Code: st.ExitCode()}
}

// Stop ends the tree: SIGTERM to every process of the job, up to grace
// for them to exit, then SIGKILL to all. It returns once the first
// process has exited (Wait then reaps the rest).
func (p *Process) Stop(grace time.Duration) {
	p.stopOnce.Do(func() {
		if p.tree != nil {
			p.tree.kill(grace)
			<-p.done
			return
		}
		p.signalJob(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
		}
		for {
			_ = syscall.Kill(p.init, syscall.SIGKILL) // PID 1: its namespace dies with it
			_ = syscall.Kill(p.outer, syscall.SIGKILL)
			p.cg.kill()
			select {
			case <-p.done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
}

// signalJob signals the job's own processes; bwrap's two are spared
// (PID 1 ignores what it has no handler for; the outer bwrap, in the
// cgroup on v2, would kill the job at once through --die-with-parent).
func (p *Process) signalJob(sig syscall.Signal) {
	for _, pid := range p.cg.pids() {
		if pid != p.outer && pid != p.init {
			_ = syscall.Kill(pid, sig)
		}
	}
}

// waitEmpty polls until the cgroup has no process, for a short while:
// there is no event for it on cgroup v1.
func waitEmpty(jc *jobCgroup) {
	step := 200 * time.Microsecond // a killed process is gone within a few ms
	for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline); step = min(2*step, 10*time.Millisecond) {
		if len(jc.pids()) == 0 {
			return
		}
		time.Sleep(step)
	}
}

// chownTree gives a tree the job's uid (and gid), never following links.
func chownTree(root string, uid int) error {
	return filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
}
