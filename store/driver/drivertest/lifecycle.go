package drivertest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

var _ = register("Lifecycle", testLifecycle)

// lcBase is the lifecycle cases' reference time, on a whole second so both
// databases keep it exactly; far enough in the past that the databases'
// own clocks see its pings as stale.
var lcBase = time.Date(2021, 3, 4, 5, 6, 0, 0, time.UTC)

// lcWorkspace is the lifecycle cases' workspace.
const lcWorkspace = "ws"

// lcEnqueue inserts one waiting job on the default tag at now.
func lcEnqueue(t *testing.T, ex driver.Executor, now time.Time) uuid.UUID {
	t.Helper()
	p, err := spine.PrepareEnqueue(spine.EnqueueParams{
		Workspace:   lcWorkspace,
		TriggerKind: spine.TriggerAPI,
		Input:       json.RawMessage(`{"n":1}`),
		Pin: spine.Pin{
			AppKey: "app", ActionKey: "act", Timeout: time.Minute,
			Retry: spine.RetryPolicy{MaxAttempts: 1, Backoff: time.Second, Factor: 2},
		},
		Now: now,
	}, now)
	if err != nil {
		t.Fatalf("PrepareEnqueue: %v", err)
	}
	return mustInsert(t, ex, p).ID
}

// lcClaim claims the one waiting job of the default tag as worker at now.
func lcClaim(t *testing.T, ex driver.Executor, worker string, now time.Time) spine.Lease {
	t.Helper()
	jobs, err := ex.Claim(t.Context(), spine.ClaimParams{Worker: worker, Tags: []string{spine.DefaultTag}, Limit: 1, Now: now})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("Claim: %d jobs, %v; want one", len(jobs), err)
	}
	return spine.Lease{JobID: jobs[0].ID, ClaimToken: jobs[0].ClaimToken}
}

// lcStatus requires status from one of the lock ops.
func lcStatus(t *testing.T, op string, got spine.Status, err error, want spine.Status) {
	t.Helper()
	if err != nil || got != want {
		t.Errorf("%s = %q, %v; want %q", op, got, err, want)
	}
}

// lcAudit requires a job's audit actions, oldest first.
func lcAudit(t *testing.T, ex driver.Executor, id uuid.UUID, want ...string) {
	t.Helper()
	entries, err := ex.Audit(t.Context(), id)
	if err != nil {
		t.Fatalf("Audit: %v", err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Action+" by "+e.By)
	}
	if len(got) != len(want) {
		t.Fatalf("audit of %s: %v, want %v", id, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("audit of %s: %v, want %v", id, got, want)
		}
	}
}

// lcBatch is the reaper batch of leases with the guard at now, the zombie
// timeout one minute.
func lcBatch(now time.Time, restartLimit int, jobErr string, leases ...spine.Lease) driver.ReapBatch {
	b := driver.ReapBatch{Now: now, ZombieTimeout: time.Minute, RestartLimit: restartLimit}
	for _, l := range leases {
		b.Add(l, jobErr)
	}
	return b
}

// testLifecycle checks the cancel, reopen, reaper, sweep and health ops:
// what each writes, and the status or typed error it answers.
func testLifecycle(t *testing.T, open Open) {
	t.Run("CancelLock", func(t *testing.T) { testLifecycleCancelLock(t, open) })
	t.Run("CancelWaiting", func(t *testing.T) { testLifecycleCancelWaiting(t, open) })
	t.Run("CancelMark", func(t *testing.T) { testLifecycleCancelMark(t, open) })
	t.Run("ReopenLock", func(t *testing.T) { testLifecycleReopenLock(t, open) })
	t.Run("Reopen", func(t *testing.T) { testLifecycleReopen(t, open) })
	t.Run("ReapLock", func(t *testing.T) { testLifecycleReapLock(t, open) })
	t.Run("ReapRequeue", func(t *testing.T) { testLifecycleReapRequeue(t, open) })
	t.Run("ReapFinish", func(t *testing.T) { testLifecycleReapFinish(t, open) })
	t.Run("Sweep", func(t *testing.T) { testLifecycleSweep(t, open) })
	t.Run("Health", func(t *testing.T) { testLifecycleHealth(t, open) })
}

func testLifecycleCancelLock(t *testing.T, open Open) {
	t.Parallel()
	d := open(t)
	ex := d.Executor()
	ctx := t.Context()
	st, err := ex.CancelLock(ctx, lcWorkspace, uuid.New())
	lcStatus(t, "CancelLock(unknown job)", st, err, "")
	queued := lcEnqueue(t, ex, lcBase)
	err = ex.Tx(ctx, func(ex driver.Executor) error {
		st, err := ex.CancelLock(ctx, lcWorkspace, queued)
		lcStatus(t, "CancelLock(queued job)", st, err, spine.StatusQueued)
		st, err = ex.CancelLock(ctx, "other", queued)
		lcStatus(t, "CancelLock(job of another workspace)", st, err, "")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	lcClaim(t, ex, "w1", lcBase)
	st, err = ex.CancelLock(ctx, lcWorkspace, queued)
	lcStatus(t, "CancelLock(running job)", st, err, spine.StatusRunning)
	canceled := lcEnqueue(t, ex, lcBase)
	if err := ex.CancelWaiting(ctx, spine.CancelParams{Workspace: lcWorkspace, JobID: canceled, By: "op", Now: lcBase}); err != nil {
		t.Fatal(err)
	}
	st, err = ex.CancelLock(ctx, lcWorkspace, canceled)
	lcStatus(t, "CancelLock(finished job)", st, err, spine.StatusCanceled)
}

func testLifecycleCancelWaiting(t *testing.T, open Open) {
	t.Parallel()
	d := open(t)
	ex := d.Executor()
	ctx := t.Context()
	id := lcEnqueue(t, ex, lcBase)
	ch, stop := d.SubscribeCompletion(id)
	defer stop()
	at := lcBase.Add(time.Second)
	err := ex.Tx(ctx, func(ex driver.Executor) error {
		if _, err := ex.CancelLock(ctx, lcWorkspace, id); err != nil {
			return err
		}
		return ex.CancelWaiting(ctx, spine.CancelParams{Workspace: lcWorkspace, JobID: id, By: "op", Reason: "why", Now: at})
	})
	if err != nil {
		t.Fatalf("CancelWaiting: %v", err)
	}
	WaitWake(t, ch, "for a waiting job canceled")
	j := getJob(t, ex, id)
	if j.Status != spine.StatusCanceled || j.StartedAt != nil || j.CanceledBy != "op" || j.CanceledReason != "why" ||
		j.CompletedAt == nil || !j.CompletedAt.Equal(at) {
		t.Errorf("canceled job: status %s started %v by %q reason %q completed %v", j.Status, j.StartedAt, j.CanceledBy, j.CanceledReason, j.CompletedAt)
	}
	lcAudit(t, ex, id, "cancel by op")
}

func testLifecycleCancelMark(t *testing.T, open Open) {
	t.Parallel()
	d := open(t)
	ex := d.Executor()
	ctx := t.Context()
	id := lcEnqueue(t, ex, lcBase)
	l := lcClaim(t, ex, "w1", lcBase)
	for _, by := range []string{"first", "second"} {
		if err := ex.CancelMark(ctx, spine.CancelParams{Workspace: lcWorkspace, JobID: id, By: by, Reason: by, Now: lcBase}); err != nil {
			t.Fatalf("CancelMark by %s: %v", by, err)
		}
	}
	j := getJob(t, ex, id)
	if j.Status != spine.StatusRunning || j.CanceledBy != "first" || j.CanceledReason != "first" {
		t.Errorf("marked job: status %s by %q reason %q, want running, the first mark kept", j.Status, j.CanceledBy, j.CanceledReason)
	}
	hb, err := ex.Heartbeat(ctx, spine.HeartbeatParams{Leases: []spine.Lease{l}, Now: lcBase})
	if err != nil || len(hb) != 1 || !hb[0].CancelRequested {
		t.Errorf("heartbeat of the marked job: %+v %v, want the cancel mark", hb, err)
	}
	lcAudit(t, ex, id, "cancel by first", "cancel by second")
}

func testLifecycleReopenLock(t *testing.T, open Open) {
	t.Parallel()
	d := open(t)
	ex := d.Executor()
	ctx := t.Context()
	st, err := ex.ReopenLock(ctx, lcWorkspace, uuid.New())
	lcStatus(t, "ReopenLock(unknown job)", st, err, "")
	id := lcEnqueue(t, ex, lcBase)
	st, err = ex.ReopenLock(ctx, lcWorkspace, id)
	lcStatus(t, "ReopenLock(queued job)", st, err, spine.StatusQueued)
	l := lcClaim(t, ex, "w1", lcBase)
	st, err = ex.ReopenLock(ctx, lcWorkspace, id)
	lcStatus(t, "ReopenLock(running job)", st, err, spine.StatusRunning)
	if _, err := ex.Complete(ctx, driver.Completion{Lease: l, Status: spine.StatusFailure, Error: jobErr(t, "boom", spine.ZombieErrorKind), Now: lcBase}); err != nil {
		t.Fatal(err)
	}
	err = ex.Tx(ctx, func(ex driver.Executor) error {
		st, err := ex.ReopenLock(ctx, lcWorkspace, id)
		lcStatus(t, "ReopenLock(failed job)", st, err, spine.StatusFailure)
		st, err = ex.ReopenLock(ctx, "other", id)
		lcStatus(t, "ReopenLock(job of another workspace)", st, err, "")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func testLifecycleReopen(t *testing.T, open Open) {
	t.Parallel()
	d := open(t)
	ex := d.Executor()
	ctx := t.Context()
	id := lcEnqueue(t, ex, lcBase)
	l := lcClaim(t, ex, "w1", lcBase)
	if _, err := ex.Complete(ctx, driver.Completion{Lease: l, Status: spine.StatusFailure, Error: jobErr(t, "boom", spine.ZombieErrorKind), Now: lcBase}); err != nil {
		t.Fatal(err)
	}
	wake, stop := d.Subscribe([]string{spine.DefaultTag})
	defer stop()
	at := lcBase.Add(time.Minute)
	err := ex.Tx(ctx, func(ex driver.Executor) error {
		if _, err := ex.ReopenLock(ctx, lcWorkspace, id); err != nil {
			return err
		}
		return ex.Reopen(ctx, spine.ReopenParams{Workspace: lcWorkspace, JobID: id, By: "op", Reason: "again", Now: at})
	})
	if err != nil {
		t.Fatalf("Reopen: %v", err)
	}
	WaitWake(t, wake, "of the reopened job's tag")
	j := getJob(t, ex, id)
	if j.Status != spine.StatusQueued || j.Attempt != 1 || j.Restarts != 0 || j.Error != nil || j.CompletedAt != nil ||
		!j.ScheduledFor.Equal(at) {
		t.Errorf("reopened job: status %s attempt %d restarts %d error %v completed %v due %v",
			j.Status, j.Attempt, j.Restarts, j.Error, j.CompletedAt, j.ScheduledFor)
	}
	lcAudit(t, ex, id, "reopen by op")
	if again := lcClaim(t, ex, "w2", at); again.JobID != id {
		t.Errorf("claimed %s after the reopen, want %s", again.JobID, id)
	}

	err = ex.Reopen(ctx, spine.ReopenParams{Workspace: lcWorkspace, JobID: uuid.New(), By: "op", Now: at})
	if !errors.Is(err, spine.ErrNotFound) {
		t.Errorf("Reopen(unknown job) = %v, want ErrNotFound", err)
	}
}

func testLifecycleReapLock(t *testing.T, open Open) {
	t.Parallel()
	d := open(t)
	ex := d.Executor()
	ctx := t.Context()
	id := lcEnqueue(t, ex, lcBase)
	lcEnqueue(t, ex, lcBase) // waiting: never a zombie
	l := lcClaim(t, ex, "w1", lcBase)
	p := driver.ReapLockParams{Now: lcBase.Add(30 * time.Second), ZombieTimeout: time.Minute, Limit: 10}
	if zs, err := ex.ReapLock(ctx, p); err != nil || len(zs) != 0 {
		t.Errorf("ReapLock with a fresh ping = %+v, %v; want none", zs, err)
	}
	p.Now = lcBase.Add(2 * time.Minute)
	err := ex.Tx(ctx, func(ex driver.Executor) error {
		zs, err := ex.ReapLock(ctx, p)
		if err != nil {
			return err
		}
		if len(zs) != 1 || zs[0].Lease != l || zs[0].Worker != "w1" || zs[0].Restarts != 0 || zs[0].Canceled ||
			zs[0].Ping == nil || !zs[0].Ping.Equal(lcBase) {
			t.Errorf("ReapLock = %+v, want job %s of w1 with its ping %v", zs, id, lcBase)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p.Limit = 0
	if zs, err := ex.ReapLock(ctx, p); err != nil || len(zs) != 0 {
		t.Errorf("ReapLock(limit 0) = %+v, %v; want none", zs, err)
	}
}

func testLifecycleReapRequeue(t *testing.T, open Open) {
	t.Parallel()
	d := open(t)
	ex := d.Executor()
	ctx := t.Context()
	id := lcEnqueue(t, ex, lcBase)
	l := lcClaim(t, ex, "w1", lcBase)
	now := lcBase.Add(2 * time.Minute)
	stale := spine.Lease{JobID: id, ClaimToken: uuid.New()}
	if ids, err := ex.ReapRequeue(ctx, lcBatch(now, 3, jobErr(t, "x", spine.ZombieErrorKind), stale)); err != nil || len(ids) != 0 {
		t.Errorf("ReapRequeue with another claim token = %v, %v; want none", ids, err)
	}
	if ids, err := ex.ReapRequeue(ctx, lcBatch(now, 0, jobErr(t, "x", spine.ZombieErrorKind), l)); err != nil || len(ids) != 0 {
		t.Errorf("ReapRequeue past the restart limit = %v, %v; want none", ids, err)
	}
	wake, stop := d.Subscribe([]string{spine.DefaultTag})
	defer stop()
	ids, err := ex.ReapRequeue(ctx, lcBatch(now, 3, jobErr(t, "worker w1 stopped", spine.ZombieErrorKind), l))
	if err != nil || len(ids) != 1 || ids[0] != id {
		t.Fatalf("ReapRequeue = %v, %v; want %s", ids, err, id)
	}
	WaitWake(t, wake, "of the requeued job's tag")
	j := getJob(t, ex, id)
	if j.Status != spine.StatusQueued || j.Restarts != 1 || j.Attempt != 1 || j.Worker != "" ||
		j.LastError == nil || j.LastError.Message != "worker w1 stopped" || j.LastError.Kind != spine.ZombieErrorKind {
		t.Errorf("requeued job: status %s restarts %d attempt %d worker %q last error %+v",
			j.Status, j.Restarts, j.Attempt, j.Worker, j.LastError)
	}
}

func testLifecycleReapFinish(t *testing.T, open Open) {
	t.Parallel()
	d := open(t)
	ex := d.Executor()
	ctx := t.Context()
	failing := lcEnqueue(t, ex, lcBase)
	lf := lcClaim(t, ex, "w1", lcBase)
	marked := lcEnqueue(t, ex, lcBase)
	lm := lcClaim(t, ex, "w1", lcBase)
	if err := ex.CancelMark(ctx, spine.CancelParams{Workspace: lcWorkspace, JobID: marked, By: "op", Now: lcBase}); err != nil {
		t.Fatal(err)
	}
	fresh := lcEnqueue(t, ex, lcBase)
	lh := lcClaim(t, ex, "w1", lcBase)
	now := lcBase.Add(2 * time.Minute)
	if _, err := ex.Heartbeat(ctx, spine.HeartbeatParams{Leases: []spine.Lease{lh}, Now: now}); err != nil {
		t.Fatal(err)
	}
	ch, stop := d.SubscribeCompletion(failing)
	defer stop()
	b := lcBatch(now, 3, jobErr(t, "x", spine.ZombieErrorKind), lf)
	if failed, canceled, err := ex.ReapFinish(ctx, b); err != nil || len(failed)+len(canceled) != 0 {
		t.Errorf("ReapFinish under the restart limit = %v %v, %v; want none", failed, canceled, err)
	}
	b = lcBatch(now, 0, jobErr(t, "restart limit 0 reached", spine.ZombieErrorKind), lf, lm, lh)
	failed, canceled, err := ex.ReapFinish(ctx, b)
	if err != nil || len(failed) != 1 || failed[0] != failing || len(canceled) != 1 || canceled[0] != marked {
		t.Fatalf("ReapFinish = failed %v canceled %v, %v; want %s failed, %s canceled (%s heartbeated)",
			failed, canceled, err, failing, marked, fresh)
	}
	WaitWake(t, ch, "for the job the reaper failed")
	j := getJob(t, ex, failing)
	if j.Status != spine.StatusFailure || j.Error == nil || j.Error.Message != "restart limit 0 reached" ||
		j.StartedAt == nil || !j.StartedAt.Equal(lcBase) || j.Worker != "w1" {
		t.Errorf("failed job: status %s error %+v started %v worker %q", j.Status, j.Error, j.StartedAt, j.Worker)
	}
	if j := getJob(t, ex, marked); j.Status != spine.StatusCanceled || j.Error != nil || j.CanceledBy != "op" {
		t.Errorf("canceled job: status %s error %+v by %q, want canceled with no error", j.Status, j.Error, j.CanceledBy)
	}
	if j := getJob(t, ex, fresh); j.Status != spine.StatusRunning {
		t.Errorf("heartbeated job: status %s, want running", j.Status)
	}
}

func testLifecycleSweep(t *testing.T, open Open) {
	t.Parallel()
	d := open(t)
	ex := d.Executor()
	ctx := t.Context()
	var done []uuid.UUID
	for i := range 3 {
		id := lcEnqueue(t, ex, lcBase)
		if err := ex.CancelWaiting(ctx, spine.CancelParams{Workspace: lcWorkspace, JobID: id, By: "op", Now: lcBase.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
		done = append(done, id)
	}
	waiting := lcEnqueue(t, ex, lcBase)
	if n, err := ex.Sweep(ctx, lcBase, 10); err != nil || n != 0 {
		t.Errorf("Sweep(before the first completion) = %d, %v; want 0", n, err)
	}
	if n, err := ex.Sweep(ctx, lcBase.Add(time.Hour), 2); err != nil || n != 2 {
		t.Errorf("Sweep(limit 2) = %d, %v; want 2", n, err)
	}
	for i, id := range done {
		_, err := ex.GetJob(ctx, lcWorkspace, id)
		if gone := errors.Is(err, spine.ErrNotFound); gone != (i < 2) {
			t.Errorf("job %d after the sweep: %v; want the oldest two gone", i, err)
		}
	}
	if n, err := ex.Sweep(ctx, lcBase.Add(time.Hour), 10); err != nil || n != 1 {
		t.Errorf("Sweep(the rest) = %d, %v; want 1", n, err)
	}
	if j := getJob(t, ex, waiting); j.Status != spine.StatusQueued {
		t.Errorf("waiting job after the sweeps: %s", j.Status)
	}
	if err := ex.SweepSchemas(ctx); err != nil {
		t.Errorf("SweepSchemas: %v", err)
	}
}

func testLifecycleHealth(t *testing.T, open Open) {
	t.Parallel()
	d := open(t)
	ex := d.Executor()
	ctx := t.Context()
	if h, err := ex.Health(ctx); err != nil || len(h) != 0 {
		t.Errorf("Health of an empty queue = %+v, %v", h, err)
	}
	lcEnqueue(t, ex, lcBase)
	lcEnqueue(t, ex, lcBase)
	lcClaim(t, ex, "w1", lcBase) // its ping, at lcBase, is long past
	expired := func() int64 {
		t.Helper()
		h, err := ex.Health(ctx)
		if err != nil || len(h) != 1 || h[0].Workspace != lcWorkspace || h[0].Tag != spine.DefaultTag ||
			h[0].Waiting != 1 || h[0].Running != 1 {
			t.Fatalf("Health = %+v, %v; want one waiting and one running job on the default tag", h, err)
		}
		return h[0].ExpiredHeartbeats
	}
	if err := ex.SetZombieTimeout(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := expired(); n != 1 {
		t.Errorf("expired heartbeats with a 1m zombie timeout: %d, want 1", n)
	}
	if err := ex.SetZombieTimeout(ctx, 100*365*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	if n := expired(); n != 0 {
		t.Errorf("expired heartbeats with a century's zombie timeout: %d, want 0", n)
	}
}
