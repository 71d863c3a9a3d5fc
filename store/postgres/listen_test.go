package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver/drivertest"
)

func TestWakeupAfterEnqueue(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ch, stop := s.Subscribe([]string{"gpu"})
	defer stop()
	other, stopOther := s.Subscribe([]string{"cpu"})
	defer stopOther()

	enqueue(t, s, job("gpu"))
	drivertest.WaitWake(t, ch, "after an enqueue on the subscribed tag")
	noWake(t, s, other, "on a tag nobody enqueued to")
}

func TestEnqueueTxWakesOnlyAfterCommit(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	ch, stop := s.Subscribe([]string{"default"})
	defer stop()

	tx, err := s.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	res, inserted, err := s.TxExecutor(tx).EnqueueInsert(ctx, prepared(t, job("default")), true)
	if err != nil || !inserted {
		t.Fatalf("enqueue in tx: %v (inserted %v)", err, inserted)
	}
	noWake(t, s, ch, "before the caller's transaction committed")
	if _, err := s.Executor().GetJob(ctx, "ws", res.ID); err == nil {
		t.Fatal("the job is visible before the caller committed")
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	drivertest.WaitWake(t, ch, "after the caller's transaction committed")
	if j := getJob(t, s, res); j.Status != spine.StatusQueued {
		t.Fatalf("status = %s, want queued", j.Status)
	}
}

func TestEnqueueTxRolledBackLeavesNothing(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	ch, stop := s.Subscribe([]string{"default"})
	defer stop()

	tx, err := s.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, inserted, err := s.TxExecutor(tx).EnqueueInsert(ctx, prepared(t, job("default")), true)
	if err != nil || !inserted {
		t.Fatalf("enqueue in tx: %v (inserted %v)", err, inserted)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Executor().GetJob(ctx, "ws", res.ID); err == nil {
		t.Fatal("a rolled-back enqueue left a job")
	}
	var n int
	if err := s.pool.QueryRow(ctx, "SELECT (SELECT count(*) FROM job) + (SELECT count(*) FROM job_queue)").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d rows left after rollback", n)
	}
	noWake(t, s, ch, "for a rolled-back enqueue")
}

func TestListenerReconnectsAndWakesEveryone(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	ch, stop := s.Subscribe([]string{"default"})
	defer stop()
	inbox, stopInbox := s.SubscribeDispatch("w1")
	defer stopInbox()
	l := s.listener
	pid := l.pid.Load()

	// Kill the listener's backend, as a failover or an idle-killer would;
	// its application_name tells it from the pool's connections.
	var killed int32
	var ok bool
	if err := s.pool.QueryRow(ctx, `SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = 'windforce listener ' || current_schema()`).Scan(&killed, &ok); err != nil || !ok || uint32(killed) != pid {
		t.Fatalf("terminated backend %d (%v), want the listener's %d", killed, err, pid)
	}
	// It reconnects, wakes every subscriber and marks every inbox missed
	// (it may have missed jobs and dispatches).
	drivertest.WaitWake(t, ch, "after the listener reconnected")
	select {
	case <-inbox.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("the dispatch inbox was not told after the reconnect")
	}
	if leases, missed := inbox.Take(); !missed || len(leases) != 0 {
		t.Fatalf("inbox after the reconnect: %v, missed %v; want nothing, missed", leases, missed)
	}
	deadline := time.Now().Add(10 * time.Second)
	for l.pid.Load() == pid {
		if time.Now().After(deadline) {
			t.Fatal("the listener did not reconnect")
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, not waiting for an event
	}
	// And it listens again.
	enqueue(t, s, job("default"))
	drivertest.WaitWake(t, ch, "after an enqueue on the new connection")
}

func TestListenerKeepalivePingKeepsTheConnection(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	s.keepalive = 20 * time.Millisecond
	ch, stop := s.Subscribe([]string{"default"})
	defer stop()
	l := s.listener
	pid := l.pid.Load()
	deadline := time.Now().Add(10 * time.Second)
	for l.pings.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatal("no keepalive pings")
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, not waiting for an event
	}
	if got := l.pid.Load(); got != pid {
		t.Fatalf("the listener reconnected (pid %d → %d) after timed-out waits", pid, got)
	}
	enqueue(t, s, job("default"))
	drivertest.WaitWake(t, ch, "after keepalive pings")
}

func TestCloseStopsListenerAndSubscribeAfterCloseIsInert(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, stop := s.Subscribe(nil)
	stop()
	s.Close()
	s.Close() // idempotent
	ch, stop := s.Subscribe(nil)
	defer stop()
	if s.listener != nil && s.listener.done != nil {
		select {
		case <-s.listener.done:
		default:
			t.Fatal("the listener still runs after Close")
		}
	}
	select {
	case <-ch:
		t.Fatal("a wake-up after Close")
	default:
	}
}
