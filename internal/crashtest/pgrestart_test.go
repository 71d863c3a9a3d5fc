package crashtest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// TestPostgresRestart restarts the local Postgres cluster (pg_ctlcluster)
// while a producer enqueues and two workers run jobs. Workers and the
// listener reconnect on their own, and every job whose enqueue was
// acknowledged finishes successfully: nothing acknowledged is lost.
//
// It restarts the shared server, so it runs only when asked:
// WINDFORCE_TEST_PG_RESTART=1 (.ci/run does, after the other tests).
func TestPostgresRestart(t *testing.T) {
	if os.Getenv("WINDFORCE_TEST_PG_RESTART") != "1" {
		t.Skip("SKIPPING: restarts the local Postgres cluster; set WINDFORCE_TEST_PG_RESTART=1 to run it alone")
	}
	tg := targets(t)["postgres"](t)
	s := tg.openT(t)

	var ran atomic.Int64
	for i := range 2 {
		w, err := spine.NewWorker(spine.WorkerConfig{Store: s, Name: "w" + string(rune('0'+i)), Tags: []string{"crash"},
			Concurrency: 4, Heartbeat: 100 * time.Millisecond, PollInterval: 100 * time.Millisecond,
			Handler: func(ctx context.Context, job *spine.ClaimedJob) (json.RawMessage, error) {
				ran.Add(1)
				return json.RawMessage(`{"ok":true}`), nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
	}
	// A reaper picks up jobs whose completion could not be written while the
	// server was down.
	reaper := &spine.Reaper{Store: s, Interval: 200 * time.Millisecond, ZombieTimeout: 3 * time.Second, RestartLimit: 10}
	if err := reaper.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reaper.Stop)

	var mu sync.Mutex
	var acked []uuid.UUID
	stop := make(chan struct{})
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		for {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			res, err := s.Enqueue(ctx, spine.EnqueueParams{Workspace: "ws", TriggerKind: spine.TriggerAPI,
				Input: json.RawMessage(`{}`), Pin: spine.Pin{AppKey: "crash", ActionKey: "run", Tag: "crash"}})
			cancel()
			if err != nil {
				time.Sleep(20 * time.Millisecond) // server down: retry pace, not a wait for an event
				continue
			}
			mu.Lock()
			acked = append(acked, res.ID)
			mu.Unlock()
		}
	}()

	waitRan(t, &ran, 200)
	restartCluster(t)
	before := ran.Load()
	waitRan(t, &ran, before+200) // work resumes after the restart
	close(stop)
	<-produced

	mu.Lock()
	defer mu.Unlock()
	deadline := time.Now().Add(90 * time.Second)
	for _, id := range acked {
		for {
			job, err := s.GetJob(context.Background(), "ws", id)
			if err == nil && job.Status == spine.StatusSuccess {
				break
			}
			if err == nil && job.Status.Terminal() {
				t.Fatalf("acknowledged job %s ended %s: %+v", id, job.Status, job.Error)
			}
			if time.Now().After(deadline) {
				t.Fatalf("acknowledged job %s not finished (err %v)", id, err)
			}
			time.Sleep(20 * time.Millisecond) // polling with a deadline
		}
	}
	t.Logf("%d acknowledged jobs all succeeded across a Postgres restart", len(acked))
}

func waitRan(t *testing.T, ran *atomic.Int64, n int64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for ran.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d jobs ran within 60s, want %d", ran.Load(), n)
		}
		time.Sleep(10 * time.Millisecond) // polling with a deadline
	}
}

func restartCluster(t *testing.T) {
	t.Helper()
	versions, err := os.ReadDir("/etc/postgresql")
	if err != nil || len(versions) == 0 {
		t.Fatalf("no local Postgres cluster to restart: %v", err)
	}
	out, err := exec.Command("pg_ctlcluster", "--skip-systemctl-redirect", versions[0].Name(), "main", "restart").CombinedOutput()
	if err != nil {
		t.Fatalf("pg_ctlcluster restart: %v\n%s", err, out)
	}
	t.Logf("restarted Postgres %s: %s", versions[0].Name(), strings.TrimSpace(string(out)))
}
