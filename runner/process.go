package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/windforce/windforce/runner/sandbox"
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
	if !r.sandbox.Enabled() {
		logs.System("sandbox off: this job runs as the worker's user and can read the worker's files and environment")
	}
	spec := sandbox.Spec{Name: filepath.Base(jd.root), Argv: argv, Env: jd.env, Dir: jd.commitDir,
		ReadOnly: append([]string{jd.commitDir}, r.runtimeDirs(rt, argv[0])...), Writable: []string{jd.root}, Tmp: jd.tmp,
		Limits: r.limits(job), Marker: "WF_JOB_ID=" + job.ID.String()}
	exit, err := r.runProcess(ctx, spec, logs)
	if err != nil {
		return nil, logs.Fail(err)
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("job stopped: %w", context.Cause(ctx))
	}
	res, err := r.outcome(job, rt, jd, exit, logs.LastLine())
	logFailure(logs, err)
	return res, err
}

// logFailure writes a failed job's error (its stack when it has one) as
// the last line of its logs.
func logFailure(logs *logSink, err error) {
	if err == nil {
		return
	}
	var f *Failure
	if errors.As(err, &f) && f.Stack != "" {
		logs.System("error: " + f.Stack)
	} else {
		logs.System("error: " + err.Error())
	}
}

// limits are the job's pinned limits; the sandbox fills and caps them.
func (r *Runner) limits(job *spine.ClaimedJob) sandbox.Limits {
	l := job.Pin.Limits
	return sandbox.Limits{Memory: l.Memory, Pids: l.Pids, CPU: l.CPU}
}

// runProcess runs spec with its output going to out and returns how it
// ended. On ctx's end the whole tree gets SIGTERM, the kill grace, then
// SIGKILL; after a normal exit, whatever the job left running is killed.
// One pipe serves stdout and stderr, which keeps their relative order in
// the log.
func (r *Runner) runProcess(ctx context.Context, spec sandbox.Spec, out io.Writer) (sandbox.Exit, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return sandbox.Exit{}, fmt.Errorf("start job: %w", err)
	}
	defer pr.Close()
	spec.Stdout, spec.Stderr = pw, pw
	p, err := r.sandbox.Start(spec)
	pw.Close()
	if err != nil {
		return sandbox.Exit{}, err
	}
	copied := make(chan struct{})
	go func() { defer close(copied); _, _ = io.Copy(out, pr) }()
	select {
	case <-p.Done():
	case <-ctx.Done():
		if l, ok := out.(*logSink); ok {
			l.System(fmt.Sprintf("stopping the job (%v): SIGTERM, then SIGKILL after %s", context.Cause(ctx), r.cfg.KillGrace))
		}
		p.Stop(r.cfg.KillGrace)
	}
	exit := p.Wait()
	select {
	case <-copied:
	case <-time.After(pipeDrainWait):
		pr.Close() // an escaped process holds the pipe: stop reading
		<-copied
	}
	return exit, nil
}

// runtimeDirs are the directories a runtime executable needs shown (see
// resolveRuntime); none for command, whose entrypoint is in the commit.
func (r *Runner) runtimeDirs(rt runtimeSpec, exe string) []string {
	if rt.exe == "" {
		return nil
	}
	return resolveRuntime(exe).dirs
}
