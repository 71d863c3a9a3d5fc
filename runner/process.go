package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/windforce/windforce/spine"
)

// pipeDrainWait bounds how long output is still read after the tree is
// gone; a process that escaped the kill and holds the pipe cannot hang
// the job past it.
const pipeDrainWait = time.Second

// run starts the job's process tree, streams its output to logs, stops the
// tree when ctx ends (cancel, timeout, lost ownership, shutdown) and turns
// what the process left into a result or an error.
func (r *Runner) run(ctx context.Context, job *spine.ClaimedJob, rt runtimeSpec, jd *jobDir, logs *logSink) (json.RawMessage, error) {
	argv, err := r.cfg.argv(rt, jd)
	if err != nil {
		return nil, logs.Fail(err)
	}
	waitErr, err := r.runProcess(ctx, argv, jd, job.ID.String(), logs)
	if err != nil {
		return nil, logs.Fail(err)
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("job stopped: %w", context.Cause(ctx))
	}
	res, err := r.outcome(job, rt, jd, waitErr, logs.LastLine())
	if err != nil {
		var f *Failure
		if errors.As(err, &f) && f.Stack != "" {
			logs.System("error: " + f.Stack)
		} else {
			logs.System("error: " + err.Error())
		}
	}
	return res, err
}

// jobProcess is a started job: its shim, the marks of its tree, and the
// goroutines that copy its output and wait for it.
type jobProcess struct {
	cmd    *exec.Cmd
	marks  treeMarks
	out    *os.File // read end of the output pipe
	cg     string
	copied chan struct{}
	exited chan error
}

// runProcess runs argv with the job's environment and returns the
// process's exit error (nil for exit status 0). On ctx's end the whole
// tree gets SIGTERM, the kill grace, then SIGKILL; after a normal exit,
// whatever the job left running is stopped the same way.
func (r *Runner) runProcess(ctx context.Context, argv []string, jd *jobDir, jobID string, logs *logSink) (waitErr, err error) {
	p, err := r.start(argv, jd, jobID, logs)
	if err != nil {
		return nil, err
	}
	defer p.out.Close()
	defer removeCgroup(p.cg)
	select {
	case waitErr = <-p.exited:
		p.marks.kill(r.cfg.KillGrace) // leftovers of a finished job
	case <-ctx.Done():
		logs.System(fmt.Sprintf("stopping the job (%v): SIGTERM, then SIGKILL after %s", context.Cause(ctx), r.cfg.KillGrace))
		p.marks.kill(r.cfg.KillGrace)
		waitErr = <-p.exited
	}
	select {
	case <-p.copied:
	case <-time.After(pipeDrainWait):
		p.out.Close() // an escaped process holds the pipe: stop reading
		<-p.copied
	}
	return waitErr, nil
}

// start launches the shim with the job under it. One pipe serves stdout
// and stderr, which keeps their relative order in the log; it is an
// *os.File, so Wait does not copy output itself (WaitDelay still bounds
// Wait should that change) and the copy is ended by runProcess.
func (r *Runner) start(argv []string, jd *jobDir, jobID string, logs *logSink) (*jobProcess, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start job: %w", err)
	}
	cg, err := newJobCgroup(r.cgroups, filepath.Base(jd.root))
	if err != nil {
		r.log.Warn("job runs without its own cgroup", "job", jobID, "err", err)
	}
	argv, attr := r.isolate(argv, jd.commitDir, jobID)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = jd.commitDir, append(jd.env, shimEnv+"=1", cgroupEnv+"="+cg)
	cmd.Stdout, cmd.Stderr, cmd.SysProcAttr = pw, pw, attr
	cmd.WaitDelay = r.cfg.KillGrace
	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		removeCgroup(cg)
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	p := &jobProcess{cmd: cmd, marks: newTreeMarks(cmd.Process.Pid, jobID), out: pr, cg: cg,
		copied: make(chan struct{}), exited: make(chan error, 1)}
	p.marks.cgroup = cg
	go func() { defer close(p.copied); _, _ = io.Copy(logs, pr) }()
	go func() { p.exited <- cmd.Wait() }()
	return p, nil
}
