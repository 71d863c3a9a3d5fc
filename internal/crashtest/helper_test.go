package crashtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store"
	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

// Environment of a helper process.
const (
	envMode   = "WF_CRASHTEST_MODE"
	envDriver = "WF_CRASHTEST_DRIVER"
	envURL    = "WF_CRASHTEST_URL"
	envSchema = "WF_CRASHTEST_SCHEMA"
	envFile   = "WF_CRASHTEST_FILE"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(envMode); mode != "" {
		if err := runHelper(mode); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// target says which database a test and its helpers use.
type target struct {
	driver, url, schema string
}

// targets returns a fresh Postgres schema and a fresh SQLite file.
func targets(t *testing.T) map[string]func(t *testing.T) target {
	return map[string]func(t *testing.T) target{
		"postgres": func(t *testing.T) target {
			url, schema := testdb.PostgresSchema(t)
			return target{driver: "postgres", url: url, schema: schema}
		},
		"sqlite": func(t *testing.T) target {
			return target{driver: "sqlite", url: testdb.SQLitePath(t)}
		},
	}
}

// open opens and migrates the target's store.
func (tg target) open(ctx context.Context) (spine.Store, error) {
	var s spine.Store
	switch tg.driver {
	case "postgres":
		ps, err := postgres.Open(ctx, tg.url, postgres.Options{Schema: tg.schema})
		if err != nil {
			return nil, err
		}
		s = store.New(ps)
	case "sqlite":
		ss, err := sqlite.Open(ctx, tg.url, sqlite.Options{})
		if err != nil {
			return nil, err
		}
		s = store.New(ss)
	default:
		return nil, fmt.Errorf("unknown driver %q", tg.driver)
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (tg target) openT(t *testing.T) spine.Store {
	t.Helper()
	s, err := tg.open(context.Background())
	if err != nil {
		t.Fatalf("open %s store: %v", tg.driver, err)
	}
	t.Cleanup(s.Close)
	return s
}

// helper is a running helper process and the lines it prints.
type helper struct {
	cmd   *exec.Cmd
	lines chan string
	errs  *strings.Builder
	done  chan struct{}
}

// startHelper re-executes this test binary in a helper mode.
func startHelper(t *testing.T, tg target, mode string, extraEnv ...string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envMode+"="+mode, envDriver+"="+tg.driver, envURL+"="+tg.url, envSchema+"="+tg.schema)
	cmd.Env = append(cmd.Env, extraEnv...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	h := &helper{cmd: cmd, lines: make(chan string, 10000), errs: &strings.Builder{}, done: make(chan struct{})}
	cmd.Stderr = &lockedWriter{w: h.errs}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper: %v", err)
	}
	go func() {
		defer close(h.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
	}()
	go func() { _ = cmd.Wait(); close(h.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		<-h.done
	})
	return h
}

// line waits for the next line starting with prefix, with a deadline.
func (h *helper) line(t *testing.T, prefix string) string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-h.lines:
			if !ok {
				t.Fatalf("helper exited before printing %q; stderr:\n%s", prefix, h.stderr())
			}
			if strings.HasPrefix(l, prefix) {
				return strings.TrimSpace(strings.TrimPrefix(l, prefix))
			}
		case <-deadline:
			t.Fatalf("helper printed no %q line within 30s; stderr:\n%s", prefix, h.stderr())
		}
	}
}

func (h *helper) stderr() string {
	if lw, ok := h.cmd.Stderr.(*lockedWriter); ok {
		return lw.String()
	}
	return ""
}

// kill sends SIGKILL and waits for the process to be gone.
func (h *helper) kill(t *testing.T) {
	t.Helper()
	if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill helper: %v", err)
	}
	<-h.done
}

// runHelper is the body of a helper process.
func runHelper(mode string) error {
	ctx := context.Background()
	tg := target{driver: os.Getenv(envDriver), url: os.Getenv(envURL), schema: os.Getenv(envSchema)}
	s, err := tg.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	switch mode {
	case "block-worker":
		return helperBlockWorker(ctx, s)
	case "claim-wait-complete":
		return helperClaimWaitComplete(ctx, s, os.Getenv(envFile))
	case "sqlite-load":
		return helperLoad(ctx, s)
	case "relay":
		return helperRelay(ctx, s)
	}
	return fmt.Errorf("unknown helper mode %q", mode)
}

// helperBlockWorker runs a real worker whose jobs never finish: it prints
// "started ID" for each and waits to be killed.
func helperBlockWorker(ctx context.Context, s spine.Store) error {
	w, err := spine.NewWorker(spine.WorkerConfig{
		Store: s, Name: "doomed", Tags: []string{"crash"}, Concurrency: 8,
		Heartbeat: 50 * time.Millisecond, PollInterval: 50 * time.Millisecond,
		Handler: func(ctx context.Context, job *spine.ClaimedJob) (json.RawMessage, error) {
			fmt.Printf("started %s\n", job.ID)
			<-ctx.Done()
			return nil, ctx.Err()
		},
	})
	if err != nil {
		return err
	}
	if err := w.Start(ctx); err != nil {
		return err
	}
	select {} // until SIGKILL
}

// helperClaimWaitComplete claims one job, prints it, waits for a file to
// appear (the test freezes this process meanwhile), then tries to
// heartbeat and complete, printing what the store answered.
func helperClaimWaitComplete(ctx context.Context, s spine.Store, file string) error {
	var jobs []spine.ClaimedJob
	for len(jobs) == 0 {
		var err error
		if jobs, err = s.Claim(ctx, spine.ClaimParams{Worker: "frozen", Tags: []string{"crash"}, Limit: 1}); err != nil {
			return err
		}
	}
	lease := spine.Lease{JobID: jobs[0].ID, ClaimToken: jobs[0].ClaimToken}
	fmt.Printf("claimed %s\n", lease.JobID)
	for {
		if _, err := os.Stat(file); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond) // polls for the test's go-ahead
	}
	owned, err := s.Heartbeat(ctx, spine.HeartbeatParams{Leases: []spine.Lease{lease}})
	fmt.Printf("heartbeat owned=%d err=%v\n", len(owned), err)
	_, err = s.Complete(ctx, spine.CompleteParams{Lease: lease, Result: json.RawMessage(`{"by":"frozen"}`)})
	fmt.Printf("complete %v\n", err)
	return nil
}

// helperLoad enqueues, claims and completes jobs in a loop, printing
// "enqueued ID" only after each enqueue has committed.
func helperLoad(ctx context.Context, s spine.Store) error {
	for i := 0; ; i++ {
		batch := make([]spine.EnqueueParams, 5)
		for j := range batch {
			batch[j] = spine.EnqueueParams{Workspace: "ws", TriggerKind: spine.TriggerSeed,
				Input: json.RawMessage(fmt.Sprintf(`{"i":%d,"j":%d,"pad":"%s"}`, i, j, strings.Repeat("x", 200))),
				Pin:   spine.Pin{AppKey: "load", ActionKey: "run", Tag: "crash"}}
		}
		res, err := s.EnqueueBatch(ctx, batch)
		if err != nil {
			return err
		}
		for _, r := range res {
			fmt.Printf("enqueued %s\n", r.ID)
		}
		claimed, err := s.Claim(ctx, spine.ClaimParams{Worker: "load", Tags: []string{"crash"}, Limit: 3})
		if err != nil {
			return err
		}
		for _, c := range claimed {
			if _, err := s.Complete(ctx, spine.CompleteParams{Lease: spine.Lease{JobID: c.ID, ClaimToken: c.ClaimToken},
				Result: json.RawMessage(`{"ok":true}`)}); err != nil {
				return err
			}
		}
	}
}

// parseID parses a job id printed by a helper.
func parseID(t *testing.T, s string) uuid.UUID {
	t.Helper()
	id, err := uuid.Parse(strings.Fields(s)[0])
	if err != nil {
		t.Fatalf("helper printed a bad id %q: %v", s, err)
	}
	return id
}

// lockedWriter collects a process's stderr safely for concurrent reads.
type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

var _ io.Writer = (*lockedWriter)(nil)
