package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store"
	"github.com/windforce/windforce/store/sqlite"
)

// requireBun skips loudly when bun is missing, unless
// WINDFORCE_TEST_REQUIRE_BUN=1, where the test fails.
func requireBun(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("bun")
	if err != nil {
		testdb.Unavailable(t, "WINDFORCE_TEST_REQUIRE_BUN", "bun", err)
	}
	return p
}

// harness is one test's world: a SQLite store, a file object cache, a
// runner and a worker using it.
type harness struct {
	t      *testing.T
	store  spine.Store
	cache  *objectcache.FileCache
	runner *Runner
	worker *spine.Worker
	dir    string
}

type harnessOpts struct {
	cfg         func(*Config)
	concurrency int
	// warm runs every job whose pin does not say otherwise in a warm
	// process with this policy (DESIGN §7).
	warm *spine.Warm
}

// setup builds a harness; the worker is started and stopped at cleanup.
func setup(t *testing.T, o harnessOpts) *harness {
	t.Helper()
	testdb.RequireSandbox(t)
	ctx := context.Background()
	d, err := sqlite.Open(ctx, testdb.SQLitePath(t), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := store.New(d)
	t.Cleanup(s.Close)
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	cache, err := objectcache.NewFileCache(filepath.Join(root, "objects"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Store: s, Cache: cache, Dir: filepath.Join(root, "wf"), Secret: []byte("test-secret"),
		URL: "http://127.0.0.1:1", Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})), KillGrace: 500 * time.Millisecond, LogFlushInterval: 50 * time.Millisecond}
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unsealAll(t, cfg.Dir); r.Close() })
	handler := r.Handle
	if o.warm != nil {
		handler = func(ctx context.Context, j *spine.ClaimedJob) (json.RawMessage, error) {
			if j.Pin.Warm == nil {
				j.Pin.Warm = o.warm
			}
			return r.Handle(ctx, j)
		}
	}
	w, err := spine.NewWorker(spine.WorkerConfig{Store: s, Handler: handler, Concurrency: max(o.concurrency, 4),
		Heartbeat: 50 * time.Millisecond, PollInterval: 50 * time.Millisecond, DrainGrace: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return &harness{t: t, store: s, cache: cache, runner: r, worker: w, dir: cfg.Dir}
}

// unsealAll makes the commit copies writable so t.TempDir can remove them.
func unsealAll(t *testing.T, dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
}

// putFixture writes testdata/<fixture> (plus extra files) to the object
// cache as commit and returns the commit's key.
func (h *harness) putFixture(fixture, commit string, extra map[string]string) {
	h.t.Helper()
	var files []objectcache.File
	base := filepath.Join("testdata", fixture)
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, _ := d.Info()
		rel, _ := filepath.Rel(base, p)
		files = append(files, objectcache.File{Path: filepath.ToSlash(rel), Mode: info.Mode().Perm(), Data: data})
		return nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	for p, data := range extra { // extra files replace the fixture's
		files = slices.DeleteFunc(files, func(f objectcache.File) bool { return f.Path == p })
		mode := fs.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") { // a command entrypoint
			mode = 0o755
		}
		files = append(files, objectcache.File{Path: p, Mode: mode, Data: []byte(data)})
	}
	if err := h.cache.Put(context.Background(), objectcache.Key{Workspace: "ws", Source: "src", Commit: commit}, files); err != nil {
		h.t.Fatal(err)
	}
}

// job describes one enqueue.
type job struct {
	app                                   string // default "app"
	commit, entry, runtime, action, input string
	outputSchema                          string
	timeout                               time.Duration
	limits                                spine.Limits
	retry                                 spine.RetryPolicy // zero: the spine's default
	warm                                  *spine.Warm       // nil: cold
}

func (h *harness) enqueue(j job) uuid.UUID {
	h.t.Helper()
	if j.app == "" {
		j.app = "app"
	}
	pin := spine.Pin{GitSourceID: "src", CommitSHA: j.commit, AppKey: j.app, ActionKey: j.action,
		Entrypoint: j.entry, Runtime: j.runtime, Timeout: j.timeout, Tag: spine.DefaultTag, Limits: j.limits, Retry: j.retry, Warm: j.warm}
	if j.timeout == 0 {
		pin.Timeout = time.Minute
	}
	if j.outputSchema != "" {
		pin.OutputSchema = json.RawMessage(j.outputSchema)
	}
	if j.input == "" {
		j.input = "null"
	}
	res, err := h.store.Enqueue(context.Background(), spine.EnqueueParams{Workspace: "ws",
		TriggerKind: spine.TriggerAPI, Input: json.RawMessage(j.input), Pin: pin})
	if err != nil {
		h.t.Fatal(err)
	}
	return res.ID
}

// wait polls the job until it is finished; its warm process (if any) is
// back in the pool, or retired, by then (warmPool.settle).
func (h *harness) wait(id uuid.UUID, within time.Duration) spine.Job {
	h.t.Helper()
	j := h.waitFor(id, within, func(j spine.Job) bool { return j.Status.Terminal() })
	if h.runner != nil { // nil when the worker is a process of its own
		h.runner.warm.settle()
	}
	return j
}

// waitFor polls the job until done holds for it, failing after within.
func (h *harness) waitFor(id uuid.UUID, within time.Duration, done func(spine.Job) bool) spine.Job {
	h.t.Helper()
	deadline := time.Now().Add(within)
	for {
		j, err := h.store.GetJob(context.Background(), "ws", id)
		if err != nil {
			h.t.Fatal(err)
		}
		if done(j) {
			return j
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("job %s still %s after %s; logs:\n%s", id, j.Status, within, h.logs(id))
		}
		time.Sleep(20 * time.Millisecond) // polling the store: no event to wait on
	}
}

// logs returns the job's stored output.
func (h *harness) logs(id uuid.UUID) string {
	chunks, err := h.store.Logs(context.Background(), id, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString(c.Data)
	}
	return b.String()
}

// waitLogs polls until the job's logs contain want.
func (h *harness) waitLogs(id uuid.UUID, want string, within time.Duration) {
	h.t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(h.logs(id), want) {
		if time.Now().After(deadline) {
			h.t.Fatalf("logs of %s never showed %q; logs:\n%s", id, want, h.logs(id))
		}
		time.Sleep(20 * time.Millisecond) // polling the store
	}
}

// jobTree finds a job's processes from outside, by the WF_JOB_ID=<id>
// entry every process of the job inherits (the test runs as root, which
// reads every /proc/PID/environ).
type jobTree struct{ marker []byte }

func newJobTree(id uuid.UUID) jobTree {
	return jobTree{marker: []byte("WF_JOB_ID=" + id.String() + "\x00")}
}

// members lists the live (not zombie) processes carrying the marker.
func (m jobTree) members() []int {
	return hostPids(func(pid int) bool {
		p := "/proc/" + strconv.Itoa(pid)
		stat, err := os.ReadFile(p + "/stat")
		if err != nil {
			return false
		}
		if i := bytes.LastIndexByte(stat, ')'); i < 0 || len(stat) < i+3 || stat[i+2] == 'Z' || stat[i+2] == 'X' {
			return false
		}
		env, err := os.ReadFile(p + "/environ")
		return err == nil && (bytes.HasPrefix(env, m.marker) || bytes.Contains(env, append([]byte{0}, m.marker...)))
	})
}

// hostPids lists the host's processes for which keep is true.
func hostPids(keep func(pid int) bool) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && keep(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func (m jobTree) signal(sig syscall.Signal) {
	for _, pid := range m.members() {
		_ = syscall.Kill(pid, sig)
	}
}

// procCmdline is a process's command line, for messages.
func procCmdline(pid int) string {
	data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strconv.Itoa(pid) + ":" + strings.TrimSpace(strings.ReplaceAll(string(data), "\x00", " "))
}
