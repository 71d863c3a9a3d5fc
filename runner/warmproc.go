package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/windforce/windforce/runner/sandbox"
	"github.com/windforce/windforce/spine"
)

// maxFrameHeader bounds an answer frame's header line ("result 12 345").
const maxFrameHeader = 128

// warmProc is one long-lived runtime process of the pool: it serves jobs
// of one warmKey, one at a time, in its own sandbox (its own uid, leased
// for its whole life, its cgroup and limits, its HOME and /tmp under
// WINDFORCE_DIR/warm/). Requests go on a pipe it reads as descriptor
// sandbox.ExtraFD, answers come back on another (ExtraFD+1): never on
// stdout, which is the job's log.
type warmProc struct {
	id       string
	key      warmKey
	dir      string
	p        *sandbox.Process
	main     int // host pid of the runtime; set under the pool's mu once ready
	requests *os.File
	answers  chan warmAnswer
	out      *warmOutput
	outDone  chan struct{}
	release  func()          // the commit copy, held while the process lives
	keep     map[string]bool // entries of HOME and /tmp at ready (clearFiles)
	suspect  bool            // a frame came that no request asked for
	seq      int
	started  time.Time

	// Guarded by the pool's mu.
	jobs      int
	busy      bool
	idleSince time.Time
	idleGen   int
	idleTimer *time.Timer
	idleMem   int64
	stopOnce  sync.Once
}

// warmAnswer is one frame of the answer pipe.
type warmAnswer struct {
	kind string // ready, result, error
	seq  int
	data []byte
	err  error // the payload was refused (over its limit): the job's failure
}

// warmRequest is one job as the wrapper reads it (one JSON line).
type warmRequest struct {
	Seq   int               `json:"seq"`
	Fence string            `json:"fence"`
	Input json.RawMessage   `json:"input"`
	Ctx   jobCtx            `json:"ctx"`
	Env   map[string]string `json:"env"`
}

// errWarmProtocol: the process broke the answer protocol (the job's code
// wrote to the answer pipe, say); it is killed.
var errWarmProtocol = errors.New("the warm process broke its answer protocol")

// startWarm starts a process for key from the first job's view of it and
// waits until it has imported the entrypoint. Output while importing is
// that job's (logs).
func (pl *warmPool) startWarm(ctx context.Context, job *spine.ClaimedJob, rt runtimeSpec, wp *warmProc, logs *logSink) error {
	r := pl.r
	commitDir, release, err := r.commits.acquire(ctx, job, rt)
	if err != nil {
		return err
	}
	wp.release = release
	entry, err := entrypointPath(commitDir, job.Pin.Entrypoint)
	if err != nil {
		return err
	}
	if wp.dir, err = os.MkdirTemp(r.cfg.warmDir(), wp.id+"-"); err != nil {
		return fmt.Errorf("create warm process directory: %w", err)
	}
	home, tmp := wp.home(), wp.tmp()
	wrapper := filepath.Join(wp.dir, rt.warm)
	if err := writeWarmDir(home, tmp, wrapper, rt.warm); err != nil {
		return err
	}
	argv, err := r.cfg.runtimeArgv(rt, wrapper)
	if err != nil {
		return err
	}
	fence := newFence()
	env := append([]string{"HOME=" + home, "TMPDIR=" + tmp, "WF_ENTRYPOINT=" + entry, "WF_START_FENCE=" + fence,
		"WF_WARM_ID=" + wp.id, "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1"}, neutralEnv()...)
	spec := sandbox.Spec{Name: filepath.Base(wp.dir), Argv: argv, Env: env, Dir: commitDir,
		ReadOnly: append([]string{commitDir}, r.runtimeDirs(rt, argv[0])...), Writable: []string{wp.dir}, Tmp: tmp,
		Limits: r.limits(job), Marker: "WF_WARM_ID=" + wp.id}
	fenced := wp.out.attach(logs, fence)
	if err := wp.launch(r, spec); err != nil {
		return err
	}
	a, err := wp.await(ctx, 0, fenced, logs)
	switch {
	case err != nil:
		return err
	case a.kind == "error":
		return warmError(a)
	case a.kind != "ready":
		return fmt.Errorf("%w: %q before ready", errWarmProtocol, a.kind)
	}
	wp.snapshotFiles()
	return nil
}

// writeWarmDir makes the process's HOME and /tmp and writes its wrapper.
func writeWarmDir(home, tmp, wrapper, name string) error {
	for _, d := range []string{home, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return fmt.Errorf("create warm process directory: %w", err)
		}
	}
	src, err := wrappers.ReadFile("wrappers/" + name)
	if err != nil {
		return fmt.Errorf("runtime wrapper: %w", err)
	}
	if err := os.WriteFile(wrapper, src, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// launch starts the sandboxed process with its three pipes.
func (wp *warmProc) launch(r *Runner, spec sandbox.Spec) error {
	var files [6]*os.File // request r/w, answer r/w, output r/w
	for i := 0; i < 6; i += 2 {
		var err error
		if files[i], files[i+1], err = os.Pipe(); err != nil {
			for _, f := range files[:i] {
				f.Close()
			}
			return fmt.Errorf("start warm process: %w", err)
		}
	}
	spec.ExtraFiles = []*os.File{files[0], files[3]}
	spec.Stdout, spec.Stderr = files[5], files[5]
	p, err := r.sandbox.Start(spec)
	files[0].Close()
	files[3].Close()
	files[5].Close()
	if err != nil {
		files[1].Close()
		files[2].Close()
		files[4].Close()
		return err
	}
	wp.p, wp.requests = p, files[1]
	go func() { defer close(wp.outDone); defer files[4].Close(); _, _ = io.Copy(wp.out, files[4]) }()
	go wp.readAnswers(files[2], r.cfg.MaxResultBytes)
	return nil
}

// readAnswers reads frames until the pipe ends or breaks the protocol;
// the channel is closed then. A payload over its limit is read past and
// answered as the job's failure, the same refusal a cold job's result
// file gets.
func (wp *warmProc) readAnswers(f *os.File, maxResult int64) {
	defer close(wp.answers)
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if err != nil || len(line) > maxFrameHeader {
			return
		}
		f := strings.Fields(string(line))
		if len(f) != 3 {
			return
		}
		seq, err1 := strconv.Atoi(f[1])
		n, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || n < 0 {
			return
		}
		a := warmAnswer{kind: f[0], seq: seq}
		limit := map[string]int64{"ready": 0, "result": maxResult, "error": maxErrorBytes}[a.kind]
		if n > limit {
			if a.kind == "ready" {
				return
			}
			a.err = tooLarge(a.kind+".json", n, limit)
			if _, err := io.CopyN(io.Discard, br, n); err != nil {
				return
			}
		} else {
			a.data = make([]byte, n)
			if _, err := io.ReadFull(br, a.data); err != nil {
				return
			}
		}
		wp.answers <- a
	}
}

// await waits for the answer to request seq and for the fence after its
// output; once either has come, the other must follow within
// pipeDrainWait (the wrapper writes them one after the other), or the
// process is killed. The process ending first is the job's failure (its
// exit status, out of memory, the last line it wrote); ctx ending first
// stops the tree. A frame of an earlier request (job code that wrote to
// the answer pipe) is skipped, and the process is not trusted again.
func (wp *warmProc) await(ctx context.Context, seq int, fenced <-chan struct{}, logs *logSink) (warmAnswer, error) {
	var a warmAnswer
	answered := false
	var deadline <-chan time.Time
	for !answered || fenced != nil {
		select {
		case got, ok := <-wp.answers:
			switch {
			case !ok:
				return a, wp.ended(ctx, logs)
			case got.seq < seq && seq > 0:
				wp.suspect = true
				continue
			case got.seq != seq:
				wp.kill()
				return a, fmt.Errorf("%w: answer %d to request %d", errWarmProtocol, got.seq, seq)
			}
			a, answered = got, true
		case <-fenced:
			fenced = nil
		case <-wp.p.Done():
			if !answered {
				return a, wp.ended(ctx, logs)
			}
			// It answered, then exited: the answer stands.
			select {
			case <-wp.outDone:
			case <-time.After(pipeDrainWait):
			}
			return a, nil
		case <-ctx.Done():
			return a, ctx.Err()
		case <-deadline:
			wp.kill()
			if answered {
				return a, nil // the output's end is lost, the answer stands
			}
			return a, fmt.Errorf("%w: no answer after the end of the job's output", errWarmProtocol)
		}
		if deadline == nil {
			deadline = time.After(pipeDrainWait)
		}
	}
	return a, nil
}

// ended explains a process that is gone (or broke the protocol) while
// serving: the job fails as a cold job whose process exited.
func (wp *warmProc) ended(ctx context.Context, logs *logSink) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	select {
	case <-wp.p.Done():
	case <-time.After(pipeDrainWait):
		wp.kill()
		return errWarmProtocol
	}
	exit := wp.p.Wait()
	select {
	case <-wp.outDone:
	case <-time.After(pipeDrainWait):
	}
	return exitFailure(exit, logs.LastLine())
}

// serve runs one job in the process: the request (input, ctx, the job's
// env) in, the answer out, its output into logs up to its fence.
func (wp *warmProc) serve(ctx context.Context, c jobCtx, input json.RawMessage, env map[string]string, logs *logSink) (warmAnswer, error) {
	wp.seq++
	if len(input) == 0 {
		input = json.RawMessage("null")
	}
	req := warmRequest{Seq: wp.seq, Fence: newFence(), Input: input, Ctx: c, Env: env}
	line, err := json.Marshal(req)
	if err != nil {
		return warmAnswer{}, fmt.Errorf("encode the warm request: %w", err)
	}
	fenced := wp.out.attach(logs, req.Fence)
	defer wp.out.detach()
	go func() {
		// A process that does not read (stuck, or gone) must not hold
		// the job: the write ends when the tree is killed.
		if _, err := wp.requests.Write(append(line, '\n')); err != nil {
			wp.kill()
		}
	}()
	return wp.await(ctx, wp.seq, fenced, logs)
}

// stop ends the tree within grace (SIGTERM to its processes, then
// SIGKILL) and waits for it.
func (wp *warmProc) stop(grace time.Duration) sandbox.Exit {
	wp.p.Stop(grace)
	return wp.p.Wait()
}

// kill ends the tree at once; the pool retires the process after.
func (wp *warmProc) kill() { wp.p.Stop(0) }

// warmError is the job's failure from an error frame.
func warmError(a warmAnswer) error {
	if a.err != nil {
		return a.err
	}
	var e struct{ Message, Stack string }
	if json.Unmarshal(a.data, &e) != nil {
		return &Failure{Message: "the runtime wrote an unreadable error", Kind: "error"}
	}
	return &Failure{Message: e.Message, Stack: e.Stack, Kind: "error"}
}
