package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/windforce/windforce/runner/sandbox"
	"github.com/windforce/windforce/spine"
)

// Warm runtimes (DESIGN §7, docs/WORKERS.md "Warm runtimes"): a job whose
// pin has Warm set runs in a long-lived process of its runtime that has
// imported the entrypoint once, instead of a fresh process tree.
//
//	Handle ── Pin.Warm, bun|node|python ──▶ warmPool.run
//	   acquire: an idle process of the job's warmKey (LIFO), else start one
//	            (evicting the least recently used idle process past the cap)
//	   serve:   request line (seq, fence, input, ctx, env) ─fd 5─▶ wrapper
//	            stdout+stderr ─pipe─▶ warmOutput ─up to the fence─▶ logSink
//	            answer frame ◀─fd 6── result | error (bounded as cold files)
//	   after:   leftovers of the job killed; recycled past max_jobs, near its
//	            memory limit, on a newer commit of its app, or idle past idle
//	   catalog: every CatalogInterval, the processes of commits no longer
//	            in the catalog are drained (warmdrain.go)
//	   ctx done (cancel│timeout│lost lease) ─▶ SIGTERM tree, grace, SIGKILL;
//	            the next job gets a fresh process
//
// A process holds no worker slot: only the job it serves does, and the
// pool never holds more processes than the worker has slots.

// warmKey is everything a warm process depends on: a process never serves
// a job whose key differs in anything.
type warmKey struct {
	workspace, source, commit, app string
	runtime, entrypoint            string
	limits                         spine.Limits
	policy                         spine.Warm
}

func keyOf(job *spine.ClaimedJob, rt runtimeSpec) warmKey {
	return warmKey{workspace: job.Workspace, source: job.Pin.GitSourceID, commit: job.Pin.CommitSHA,
		app: job.Pin.AppKey, runtime: rt.name, entrypoint: job.Pin.Entrypoint,
		limits: job.Pin.Limits, policy: warmPolicy(job.Pin.Warm)}
}

// warmPolicy fills a pin's unset fields from spine.DefaultWarm.
func warmPolicy(w *spine.Warm) spine.Warm {
	p := *w
	if p.MaxJobs <= 0 {
		p.MaxJobs = spine.DefaultWarm.MaxJobs
	}
	if p.Idle <= 0 {
		p.Idle = spine.DefaultWarm.Idle
	}
	return p
}

// appKey names an app across its commits.
type appKey struct{ workspace, app string }

// commitSeen is the newest commit of an app the pool has seen, by the
// creation time of the job that pinned it.
type commitSeen struct {
	source, commit string
	created        time.Time
}

// warmPool is the runner's warm processes.
type warmPool struct {
	r   *Runner
	max int

	mu       sync.Mutex
	idle     map[warmKey][]*warmProc // most recently used last
	procs    map[*warmProc]bool      // every live process: starting, busy, idle
	latest   map[appKey]commitSeen
	gone     map[commitRef]bool // commits the catalog no longer has (warmdrain.go)
	nextID   int
	closed   bool
	retiring sync.WaitGroup

	// finishing counts, per key, the processes whose done runs after
	// their job was answered (finish); finished is signalled as each
	// one is done.
	finishing map[warmKey]int
	finished  *sync.Cond
	// waiting counts the jobs waiting for a finishing process, and
	// beforeDone runs before each finish's done: both for tests.
	waiting    int
	beforeDone func()

	// The catalog watcher (warmdrain.go); catalogDown is its own (a
	// failing read is logged once).
	watch       spine.Lifecycle
	catalogDown bool
}

func newWarmPool(r *Runner, max int) *warmPool {
	if max <= 0 {
		max = runtime.NumCPU()
	}
	pl := &warmPool{r: r, max: max, idle: map[warmKey][]*warmProc{}, procs: map[*warmProc]bool{},
		latest: map[appKey]commitSeen{}, finishing: map[warmKey]int{}}
	pl.finished = sync.NewCond(&pl.mu)
	if r.cfg.Catalog != nil {
		interval := r.cfg.CatalogInterval
		_ = pl.watch.StartEvery(context.Background(), interval, func(ctx context.Context) { pl.drainGone(ctx, interval) })
	}
	return pl
}

// run serves one job in a warm process; vars are its resolved env
// (JobEnv.Vars), set for this job only, under the contract's variables.
func (pl *warmPool) run(ctx context.Context, job *spine.ClaimedJob, rt runtimeSpec, token string, vars []string, logs *logSink) (json.RawMessage, error) {
	if !pl.r.sandbox.Enabled() {
		logs.System("sandbox off: this job runs as the worker's user and can read the worker's files and environment")
	}
	key := keyOf(job, rt)
	wp, err := pl.acquire(ctx, job, rt, key, logs)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("job stopped: %w", context.Cause(ctx))
		}
		logFailure(logs, err)
		return nil, err
	}
	c := newJobCtx(job, token, pl.r.cfg.URL)
	a, err := wp.serve(ctx, c, job.Input, envMap(append(slices.Clip(vars), contractEnv(c)...)), logs)
	if ctx.Err() != nil {
		logs.System(fmt.Sprintf("stopping the job (%v): SIGTERM, then SIGKILL after %s", context.Cause(ctx), pl.r.cfg.KillGrace))
		wp.stop(pl.r.cfg.KillGrace)
		pl.done(wp, false) // stopped: retired whatever the memory says
		return nil, fmt.Errorf("job stopped: %w", context.Cause(ctx))
	}
	// Out of memory first, as for a cold job: the kernel killed part of
	// the tree during the job (a process never serves after that).
	oom := wp.p.OOMKilled()
	if err == nil && oom {
		err = exitFailure(sandbox.Exit{OOM: true, Memory: wp.p.Limits().Memory}, "")
	}
	pl.finish(wp, oom)
	if err == nil {
		var res json.RawMessage
		if res, err = pl.answer(job, rt, a); err == nil {
			return res, nil
		}
	}
	logFailure(logs, err)
	return nil, err
}

// answer turns an answer frame into the job's result or failure, checked
// as a cold job's result file is.
func (pl *warmPool) answer(job *spine.ClaimedJob, rt runtimeSpec, a warmAnswer) (json.RawMessage, error) {
	switch {
	case a.kind == "error":
		return nil, warmError(a)
	case a.kind != "result":
		return nil, fmt.Errorf("%w: %q answer", errWarmProtocol, a.kind)
	case a.err != nil:
		return nil, a.err
	}
	res, err := acceptResult(a.data, rt)
	if err != nil {
		return nil, err
	}
	if err := validateOutput(job.Pin.OutputSchema, res); err != nil {
		return nil, err
	}
	return res, nil
}

// envMap turns NAME=value entries into the request's env.
func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		m[k] = v
	}
	return m
}

// acquire takes an idle process of key, or starts one. A job of a newer
// commit of its app first drains the idle processes of older commits.
func (pl *warmPool) acquire(ctx context.Context, job *spine.ClaimedJob, rt runtimeSpec, key warmKey, logs *logSink) (*warmProc, error) {
	pl.mu.Lock()
	pl.noteCommit(job)
	// A process of key whose last job was just answered is about to be
	// idle: a few tens of microseconds, against a start of tens of
	// milliseconds (and one process more than the load needs).
	for len(pl.idle[key]) == 0 && pl.finishing[key] > 0 && !pl.closed {
		pl.waiting++
		pl.finished.Wait()
		pl.waiting--
	}
	if pl.closed {
		pl.mu.Unlock()
		return nil, fmt.Errorf("runner: closed")
	}
	if list := pl.idle[key]; len(list) > 0 {
		wp := list[len(list)-1]
		pl.setIdle(key, list[:len(list)-1])
		wp.busy = true
		wp.idleGen++
		wp.idleTimer.Stop()
		pl.mu.Unlock()
		return wp, nil
	}
	for len(pl.procs) >= pl.max && pl.evictOne() {
	}
	pl.nextID++
	wp := &warmProc{id: "w" + strconv.Itoa(pl.nextID) + "-" + strconv.Itoa(os.Getpid()), key: key, busy: true,
		answers: make(chan warmAnswer, 1), out: &warmOutput{}, outDone: make(chan struct{}), started: time.Now()}
	pl.procs[wp] = true
	pl.mu.Unlock()
	if err := pl.startWarm(ctx, job, rt, wp, logs); err != nil {
		pl.retire(wp)
		return nil, err
	}
	main := wp.p.Main()
	pl.mu.Lock()
	wp.main = main // what the process is made of is set: stats may read it
	pl.mu.Unlock()
	return wp, nil
}

// noteCommit records the job's commit as its app's newest when the job
// was created after every job seen so far, and drains the idle processes
// of the app's other commits. Callers hold mu.
func (pl *warmPool) noteCommit(job *spine.ClaimedJob) {
	ak := appKey{job.Workspace, job.Pin.AppKey}
	seen, ok := pl.latest[ak]
	if ok && !job.CreatedAt.After(seen.created) {
		return
	}
	pl.latest[ak] = commitSeen{source: job.Pin.GitSourceID, commit: job.Pin.CommitSHA, created: job.CreatedAt}
	if ok && seen.commit == job.Pin.CommitSHA && seen.source == job.Pin.GitSourceID {
		return
	}
	for k, list := range pl.idle {
		if k.workspace == ak.workspace && k.app == ak.app && (k.commit != job.Pin.CommitSHA || k.source != job.Pin.GitSourceID) {
			delete(pl.idle, k)
			for _, wp := range list {
				pl.retireLocked(wp)
			}
		}
	}
}

// stale reports whether a newer commit of key's app has been seen, or
// the catalog no longer has key's commit. Callers hold mu.
func (pl *warmPool) stale(key warmKey) bool {
	seen, ok := pl.latest[appKey{key.workspace, key.app}]
	newer := ok && (seen.commit != key.commit || seen.source != key.source)
	return newer || pl.gone[key.ref()]
}

// evictOne retires the least recently used idle process; false when
// none is idle. Callers hold mu.
func (pl *warmPool) evictOne() bool {
	var oldest *warmProc
	for _, list := range pl.idle {
		if len(list) > 0 && (oldest == nil || list[0].idleSince.Before(oldest.idleSince)) {
			oldest = list[0]
		}
	}
	if oldest == nil {
		return false
	}
	pl.setIdle(oldest.key, slices.DeleteFunc(pl.idle[oldest.key], func(w *warmProc) bool { return w == oldest }))
	pl.retireLocked(oldest)
	return true
}

func (pl *warmPool) setIdle(key warmKey, list []*warmProc) {
	if len(list) == 0 {
		delete(pl.idle, key)
		return
	}
	pl.idle[key] = list
}

// done takes a process back after its job (finish has killed what the
// job left running; a stopped job's whole tree is gone): the files the
// job left are cleared, and the process is recycled when it is gone or
// dying, has served max_jobs, is near its memory limit (or the kernel
// killed part of it for memory), serves an app's older commit or one the
// catalog no longer has, or the pool is closed. oom says the kernel
// killed part of its tree for memory during the job (read once, by run).
// Otherwise it waits idle, for at most the policy's idle time.
func (pl *warmPool) done(wp *warmProc, oom bool) {
	alive := wp.alive() && wp.clearFiles() == nil
	mem, _ := wp.memory()
	pl.mu.Lock()
	defer pl.mu.Unlock()
	wp.jobs++
	wp.busy = false
	if !alive || wp.suspect || len(wp.answers) > 0 || pl.closed || wp.jobs >= wp.key.policy.MaxJobs || wp.overMemory(mem, oom) || pl.stale(wp.key) {
		pl.retireLocked(wp)
		return
	}
	wp.idleMem = mem
	wp.idleSince = time.Now()
	wp.idleGen++
	gen := wp.idleGen
	wp.idleTimer = time.AfterFunc(wp.key.policy.Idle, func() { pl.expire(wp, gen) })
	pl.idle[wp.key] = append(pl.idle[wp.key], wp)
}

// finish takes a process back after its answered job without holding
// up the answer: what the job left running is killed at once (nothing of
// a job outlives its outcome), and done (clearing HOME and /tmp, reading
// the memory, the recycle decision) runs after. Until then the process
// is busy: no other job gets it.
func (pl *warmPool) finish(wp *warmProc, oom bool) {
	if wp.alive() {
		wp.p.KillOthers(wp.main)
	}
	pl.mu.Lock()
	if pl.closed {
		pl.mu.Unlock()
		pl.done(wp, oom) // retires it
		return
	}
	pl.finishing[wp.key]++ // under mu with closed: close's settle sees it
	hook := pl.beforeDone
	pl.mu.Unlock()
	go func() {
		if hook != nil {
			hook()
		}
		pl.done(wp, oom)
		pl.mu.Lock()
		if pl.finishing[wp.key]--; pl.finishing[wp.key] == 0 {
			delete(pl.finishing, wp.key)
		}
		pl.mu.Unlock()
		pl.finished.Broadcast()
	}()
}

// settle waits until no process is between its answered job and its
// place back in the pool (finish): what the pool holds then reflects
// every job answered so far.
func (pl *warmPool) settle() {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for len(pl.finishing) > 0 {
		pl.finished.Wait()
	}
}

// expire retires a process idle since generation gen.
func (pl *warmPool) expire(wp *warmProc, gen int) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if wp.busy || wp.idleGen != gen || !pl.procs[wp] {
		return
	}
	pl.setIdle(wp.key, slices.DeleteFunc(pl.idle[wp.key], func(w *warmProc) bool { return w == wp }))
	pl.retireLocked(wp)
}

// alive reports whether the process is still running.
func (wp *warmProc) alive() bool {
	select {
	case <-wp.p.Done():
		return false
	default:
		return wp.main > 0
	}
}

// overMemory: past 90% of its memory limit, or the kernel killed part of
// the tree for memory (oom); a next job would likely run out.
func (wp *warmProc) overMemory(mem int64, oom bool) bool {
	limit := wp.p.Limits().Memory
	return oom || (limit > 0 && mem > limit/10*9)
}

// retire ends a process that serves no job any more.
func (pl *warmPool) retire(wp *warmProc) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.retireLocked(wp)
}

// retireLocked removes wp from the pool and ends it in the background:
// its request pipe is closed (the wrapper exits), and what is left after
// a moment is killed. Callers hold mu.
func (pl *warmPool) retireLocked(wp *warmProc) {
	if !pl.procs[wp] {
		return
	}
	delete(pl.procs, wp)
	if wp.idleTimer != nil {
		wp.idleTimer.Stop()
	}
	pl.retiring.Add(1)
	go func() {
		defer pl.retiring.Done()
		wp.end()
	}()
}

// end stops the process (if it started) and removes what it held.
func (wp *warmProc) end() {
	wp.stopOnce.Do(func() {
		if wp.p != nil {
			wp.requests.Close()
			select {
			case <-wp.p.Done():
			case <-time.After(pipeDrainWait):
			}
			wp.stop(0)
			select {
			case <-wp.outDone:
			case <-time.After(pipeDrainWait):
			}
		}
		if wp.dir != "" {
			_ = os.RemoveAll(wp.dir)
		}
		if wp.release != nil {
			wp.release()
		}
	})
}

// clearFiles empties the process's HOME and /tmp: files a job wrote there
// are not the next job's (module state in memory is; docs/WORKERS.md).
// What was there when the process became ready stays: the mount points
// the sandbox made (a WINDFORCE_DIR below /tmp shows its paths inside the
// process's /tmp; removing them would unmount them). A process whose
// files cannot be removed is retired.
func (wp *warmProc) clearFiles() error {
	for _, d := range []string{wp.home(), wp.tmp()} {
		entries, err := os.ReadDir(d)
		if err != nil {
			return fmt.Errorf("clear %s: %w", d, err)
		}
		for _, e := range entries {
			p := filepath.Join(d, e.Name())
			if wp.keep[p] {
				continue
			}
			if err := os.RemoveAll(p); err != nil {
				return fmt.Errorf("clear %s: %w", d, err)
			}
		}
	}
	return nil
}

// snapshotFiles records what HOME and /tmp hold once the process is
// ready; clearFiles keeps it.
func (wp *warmProc) snapshotFiles() {
	wp.keep = map[string]bool{}
	for _, d := range []string{wp.home(), wp.tmp()} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			wp.keep[filepath.Join(d, e.Name())] = true
		}
	}
}

func (wp *warmProc) home() string { return filepath.Join(wp.dir, "home") }
func (wp *warmProc) tmp() string  { return filepath.Join(wp.dir, "tmp") }

// memory is the process's memory use now: its cgroup's, or its resident
// set with the sandbox off.
func (wp *warmProc) memory() (int64, bool) {
	if wp.p == nil {
		return 0, false
	}
	if n, ok := wp.p.MemoryUsage(); ok {
		return n, true
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(wp.main) + "/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize()), err == nil
}

// close retires every process and waits for them; the worker has stopped,
// so none is serving a job.
func (pl *warmPool) close() {
	pl.watch.Stop()
	pl.mu.Lock()
	pl.closed = true
	for wp := range pl.procs {
		if !wp.busy {
			pl.retireLocked(wp)
		}
	}
	pl.idle = map[warmKey][]*warmProc{}
	pl.mu.Unlock()
	pl.settle() // the processes being taken back retire (closed)
	pl.retiring.Wait()
}
