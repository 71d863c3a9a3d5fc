package drivertest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

var _ = register("Queue", testQueue)

// qBase is the queue cases' clock: every operation gets an explicit time
// from it, so none depends on the database's.
var qBase = time.Date(2030, 7, 8, 9, 10, 0, 0, time.UTC)

// qPolicy is the retry policy pinned on the cases' jobs.
var qPolicy = spine.RetryPolicy{MaxAttempts: 3, Backoff: 2 * time.Second, Factor: 3}

// qEnqueue inserts a job on tag in workspace ws, due at qBase.
func qEnqueue(t *testing.T, ex driver.Executor, ws, tag string) uuid.UUID {
	t.Helper()
	p, err := spine.PrepareEnqueue(spine.EnqueueParams{
		Workspace: ws, TriggerKind: spine.TriggerAPI, Input: json.RawMessage(`{"n":1}`), Now: qBase,
		Pin: spine.Pin{AppKey: "app", ActionKey: "act", Tag: tag, Timeout: time.Minute, Retry: qPolicy},
	}, qBase)
	if err != nil {
		t.Fatalf("prepare enqueue: %v", err)
	}
	return mustInsert(t, ex, p).ID
}

// qClaim claims exactly n jobs on tag at qBase.
func qClaim(t *testing.T, ex driver.Executor, tag string, n int) []spine.ClaimedJob {
	t.Helper()
	jobs, err := ex.Claim(t.Context(), spine.ClaimParams{Worker: "w1", Tags: []string{tag}, Limit: n, Now: qBase})
	if err != nil || len(jobs) != n {
		t.Fatalf("Claim: %d jobs, %v; want %d", len(jobs), err, n)
	}
	return jobs
}

func qLease(j spine.ClaimedJob) spine.Lease {
	return spine.Lease{JobID: j.ID, ClaimToken: j.ClaimToken}
}

// qLost is j's lease with a claim token that never matched.
func qLost(j spine.ClaimedJob) spine.Lease { return spine.Lease{JobID: j.ID, ClaimToken: uuid.New()} }

// qNotOwner requires err to be spine.ErrNotOwner.
func qNotOwner(t *testing.T, op string, err error) {
	t.Helper()
	if !errors.Is(err, spine.ErrNotOwner) {
		t.Fatalf("%s on a lost lease: %v, want ErrNotOwner", op, err)
	}
}

// qMark sets the cancel mark on a running job.
func qMark(t *testing.T, ex driver.Executor, id uuid.UUID) {
	t.Helper()
	if err := ex.CancelMark(t.Context(), spine.CancelParams{Workspace: "ws", JobID: id, By: "op", Reason: "stop", Now: qBase}); err != nil {
		t.Fatalf("CancelMark: %v", err)
	}
}

// testQueue checks each operation of driver.QueueExecutor: what it
// writes and reads, and spine.ErrNotOwner (or ErrNotFound) where the
// lease (or the job) is not there.
func testQueue(t *testing.T, open Open) {
	t.Run("Claim", func(t *testing.T) { testQueueClaim(t, open) })
	t.Run("Heartbeat", func(t *testing.T) { testQueueHeartbeat(t, open) })
	t.Run("Complete", func(t *testing.T) { testQueueComplete(t, open) })
	t.Run("CompleteBatch", func(t *testing.T) { testQueueCompleteBatch(t, open) })
	t.Run("CompleteBatchWakeUps", func(t *testing.T) { testQueueCompleteBatchWakeUps(t, open) })
	t.Run("LockLease", func(t *testing.T) { testQueueLockLease(t, open) })
	t.Run("LockLeases", func(t *testing.T) { testQueueLockLeases(t, open) })
	t.Run("Requeue", func(t *testing.T) { testQueueRequeue(t, open) })
	t.Run("WriteFailures", func(t *testing.T) { testQueueWriteFailures(t, open) })
	t.Run("AppendLogAndLogs", func(t *testing.T) { testQueueAppendLogAndLogs(t, open) })
	t.Run("GetJobAndAudit", func(t *testing.T) { testQueueGetJobAndAudit(t, open) })
	t.Run("ListAndCountJobs", func(t *testing.T) { testQueueListAndCountJobs(t, open) })
}

func testQueueClaim(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	first, second := qEnqueue(t, ex, "ws", "a"), qEnqueue(t, ex, "ws", "a")
	qEnqueue(t, ex, "ws", "b")
	jobs := qClaim(t, ex, "a", 1)
	j := jobs[0]
	if j.ID != first && j.ID != second || j.ClaimToken == uuid.Nil || j.Attempt != 1 || j.Pin.Tag != "a" ||
		j.Pin.Retry != qPolicy || !j.StartedAt.Equal(qBase) || string(j.Input) != `{"n":1}` {
		t.Fatalf("claimed %+v, want one of the jobs on a, its first attempt started at %v", j, qBase)
	}
	if got := getJob(t, ex, j.ID); got.Status != spine.StatusRunning || got.Worker != "w1" || got.Ping == nil || !got.Ping.Equal(qBase) {
		t.Fatalf("claimed job reads %s by %q, ping %v; want running by w1, first ping at the claim", got.Status, got.Worker, got.Ping)
	}
	// Not yet due: nothing to claim.
	early, err := ex.Claim(t.Context(), spine.ClaimParams{Worker: "w", Tags: []string{"a", "b"}, Limit: 5, Now: qBase.Add(-time.Hour)})
	if err != nil || len(early) != 0 {
		t.Fatalf("Claim before the jobs are due: %d jobs, %v; want none", len(early), err)
	}
	if rest := qClaim(t, ex, "a", 1); rest[0].ID == j.ID {
		t.Fatal("the same job was claimed twice")
	}
	none, err := ex.Claim(t.Context(), spine.ClaimParams{Worker: "w", Tags: []string{"a", "nobody"}, Limit: 5, Now: qBase})
	if err != nil || len(none) != 0 {
		t.Fatalf("Claim of an empty tag: %d jobs, %v; want none", len(none), err)
	}
}

func testQueueHeartbeat(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	qEnqueue(t, ex, "ws", "a")
	qEnqueue(t, ex, "ws", "a")
	jobs := qClaim(t, ex, "a", 2)
	qMark(t, ex, jobs[1].ID)
	later := qBase.Add(time.Minute)
	got, err := ex.Heartbeat(t.Context(), spine.HeartbeatParams{
		Leases: []spine.Lease{qLease(jobs[0]), qLease(jobs[1]), qLease(jobs[0]), qLost(jobs[1])}, Now: later,
	})
	if err != nil || len(got) != 2 {
		t.Fatalf("Heartbeat: %+v %v; want the two owned leases once each", got, err)
	}
	marks := map[uuid.UUID]bool{}
	for _, r := range got {
		marks[r.JobID] = r.CancelRequested
	}
	if m, ok := marks[jobs[0].ID]; !ok || m {
		t.Fatalf("Heartbeat %+v: want %v owned and unmarked", got, jobs[0].ID)
	}
	if m, ok := marks[jobs[1].ID]; !ok || !m {
		t.Fatalf("Heartbeat %+v: want %v owned and marked", got, jobs[1].ID)
	}
	if p := getJob(t, ex, jobs[0].ID).Ping; p == nil || !p.Equal(later) {
		t.Fatalf("ping after the heartbeat %v, want %v", p, later)
	}
	lost, err := ex.Heartbeat(t.Context(), spine.HeartbeatParams{Leases: []spine.Lease{qLost(jobs[0])}, Now: later})
	if err != nil || len(lost) != 0 {
		t.Fatalf("Heartbeat of a lost lease: %+v %v; want nothing back", lost, err)
	}
}

func testQueueComplete(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	qEnqueue(t, ex, "ws", "a")
	qEnqueue(t, ex, "ws", "a")
	jobs := qClaim(t, ex, "a", 2)
	done := qBase.Add(1500 * time.Millisecond)
	_, err := ex.Complete(t.Context(), driver.Completion{Lease: qLost(jobs[0]), Status: spine.StatusSuccess, Now: done})
	qNotOwner(t, "Complete", err)
	st, err := ex.Complete(t.Context(), driver.Completion{
		Lease: qLease(jobs[0]), Status: spine.StatusSuccess, Result: json.RawMessage(`{"ok":true}`), Now: done,
	})
	if err != nil || st != spine.StatusSuccess {
		t.Fatalf("Complete: %s %v, want success", st, err)
	}
	j := getJob(t, ex, jobs[0].ID)
	if j.Status != spine.StatusSuccess || string(j.Result) != `{"ok":true}` || j.CompletedAt == nil || !j.CompletedAt.Equal(done) || j.Ping != nil {
		t.Fatalf("completed job %s, result %s, at %v, ping %v", j.Status, j.Result, j.CompletedAt, j.Ping)
	}
	_, err = ex.Complete(t.Context(), driver.Completion{Lease: qLease(jobs[0]), Status: spine.StatusSuccess, Now: done})
	qNotOwner(t, "a second Complete", err)

	// A failure with its error; the cancel mark wins over the status.
	qMark(t, ex, jobs[1].ID)
	st, err = ex.Complete(t.Context(), driver.Completion{Lease: qLease(jobs[1]), Status: spine.StatusFailure, Error: jobErr(t, "boom", ""), Now: done})
	if err != nil || st != spine.StatusCanceled {
		t.Fatalf("Complete of a marked job: %s %v, want canceled", st, err)
	}
	if j := getJob(t, ex, jobs[1].ID); j.Status != spine.StatusCanceled || j.Error == nil || j.Error.Message != "boom" || j.CanceledBy != "op" {
		t.Fatalf("marked job after Complete: %s, error %+v, canceled by %q", j.Status, j.Error, j.CanceledBy)
	}
}

func testQueueCompleteBatch(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	for range 3 {
		qEnqueue(t, ex, "ws", "a")
	}
	jobs := qClaim(t, ex, "a", 3)
	qMark(t, ex, jobs[2].ID)
	statuses, err := ex.CompleteBatch(t.Context(), []spine.CompleteParams{
		{Lease: qLease(jobs[0]), Result: json.RawMessage(`1`), Now: qBase},
		{Lease: qLost(jobs[1]), Result: json.RawMessage(`2`), Now: qBase},
		{Lease: qLease(jobs[2]), Result: json.RawMessage(`3`), Now: qBase},
	})
	if err != nil || len(statuses) != 3 || statuses[0] != spine.StatusSuccess || statuses[1] != "" || statuses[2] != spine.StatusCanceled {
		t.Fatalf("CompleteBatch: %v %v; want success, lost (empty), canceled", statuses, err)
	}
	if j := getJob(t, ex, jobs[0].ID); j.Status != spine.StatusSuccess || string(j.Result) != `1` {
		t.Fatalf("first job %s with result %s", j.Status, j.Result)
	}
	if j := getJob(t, ex, jobs[1].ID); j.Status != spine.StatusRunning {
		t.Fatalf("the lost lease's job is %s, want still running", j.Status)
	}
}

// A batch completion's wake-ups carry each success's result exactly as
// GetJob then reads it (a ?wait answers with it), also when the batch's
// results are many and near the size a notification may carry; a
// canceled job's is a hint only. Results of a few bytes are always
// carried: that is what spares a ?wait its read.
func testQueueCompleteBatchWakeUps(t *testing.T, open Open) {
	t.Parallel()
	d := open(t)
	ex := d.Executor()
	const n = 120
	for range n + 3 {
		qEnqueue(t, ex, "ws", "a")
	}
	jobs := qClaim(t, ex, "a", n+3)
	qMark(t, ex, jobs[2].ID)
	results := map[int]json.RawMessage{
		0: json.RawMessage(`{"b": [1, 2], "a": "x"}`), // jsonb reorders its keys
		1: nil,
		2: json.RawMessage(`3`),
		3: json.RawMessage(`"` + strings.Repeat("y", 3000) + `"`),
	}
	for k := 4; k < n+3; k++ {
		results[k] = json.RawMessage(fmt.Sprintf(`"%d %s"`, k, strings.Repeat("z", 1990)))
	}
	batch := make([]spine.CompleteParams, len(jobs))
	waits := make([]<-chan spine.Finished, len(jobs))
	for k, j := range jobs {
		batch[k] = spine.CompleteParams{Lease: qLease(j), Result: results[k], Now: qBase}
		ch, stop := d.SubscribeCompletion(j.ID)
		defer stop()
		waits[k] = ch
	}
	if _, err := ex.CompleteBatch(t.Context(), batch); err != nil {
		t.Fatalf("CompleteBatch: %v", err)
	}
	for k, j := range jobs {
		var f spine.Finished
		select {
		case f = <-waits[k]:
		case <-time.After(10 * time.Second):
			t.Fatalf("job %d: no completion wake-up", k)
		}
		got := getJob(t, ex, j.ID)
		switch {
		case f.ID != j.ID:
			t.Fatalf("job %d: woken for %v", k, f.ID)
		case k == 2 && f.Carries():
			t.Fatalf("the canceled job's wake-up carries %+v", f)
		case k == 2:
		case !f.Carries() && len(results[k]) < 100:
			t.Fatalf("job %d: the wake-up of a success with a small result carries nothing", k)
		case f.Carries() && !sameResult(f.Result, got.Result):
			t.Fatalf("job %d: the wake-up carries %s, GetJob reads %s", k, f.Result, got.Result)
		}
	}
}

// sameResult compares results as a ?wait answer shows them: encoded
// compact (as encoding/json writes a RawMessage), none as null.
func sameResult(a, b json.RawMessage) bool {
	shown := func(r json.RawMessage) string {
		if r == nil {
			return "null"
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, r); err != nil {
			return "invalid JSON: " + string(r)
		}
		return buf.String()
	}
	return shown(a) == shown(b)
}

func testQueueLockLease(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	qEnqueue(t, ex, "ws", "a")
	qEnqueue(t, ex, "ws", "a")
	jobs := qClaim(t, ex, "a", 2)
	qMark(t, ex, jobs[1].ID)
	at := qBase.Add(time.Second)
	err := ex.Tx(t.Context(), func(ex driver.Executor) error {
		st, err := ex.LockLease(t.Context(), qLease(jobs[0]), at)
		if err != nil {
			return err
		}
		if st.Attempt != 1 || st.Canceled || st.Retry != qPolicy || !st.Now.Equal(at) {
			t.Errorf("LockLease: %+v, want attempt 1, unmarked, the pinned policy, now %v", st, at)
		}
		if st, err = ex.LockLease(t.Context(), qLease(jobs[1]), at); err != nil || !st.Canceled {
			t.Errorf("LockLease of a marked job: %+v %v, want the mark", st, err)
		}
		_, err = ex.LockLease(t.Context(), qLost(jobs[0]), at)
		qNotOwner(t, "LockLease", err)
		return nil
	})
	if err != nil {
		t.Fatalf("Tx: %v", err)
	}
}

func testQueueLockLeases(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	qEnqueue(t, ex, "ws", "a")
	qEnqueue(t, ex, "ws", "a")
	jobs := qClaim(t, ex, "a", 2)
	qMark(t, ex, jobs[1].ID)
	at := qBase.Add(time.Second)
	err := ex.Tx(t.Context(), func(ex driver.Executor) error {
		locked, err := ex.LockLeases(t.Context(), []driver.LeaseAt{
			{Lease: qLease(jobs[0]), Now: at}, {Lease: qLease(jobs[1]), Now: at}, {Lease: qLost(jobs[0]), Now: at},
		})
		if err != nil {
			return err
		}
		a, b := locked[qLease(jobs[0])], locked[qLease(jobs[1])]
		if len(locked) != 2 || a.Attempt != 1 || a.Canceled || a.Retry != qPolicy || !a.Now.Equal(at) || !b.Canceled {
			t.Errorf("LockLeases: %+v; want the two owned leases, the second marked", locked)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Tx: %v", err)
	}
}

func testQueueRequeue(t *testing.T, open Open) {
	t.Parallel()
	d := open(t)
	ex := d.Executor()
	qEnqueue(t, ex, "ws", "a")
	qEnqueue(t, ex, "ws", "a")
	qEnqueue(t, ex, "ws", "a")
	jobs := qClaim(t, ex, "a", 3)
	woken, stop := d.Subscribe([]string{"a"})
	defer stop()
	retryAt := qBase.Add(time.Hour)
	qNotOwner(t, "Requeue", ex.Requeue(t.Context(), driver.Requeue{Lease: qLost(jobs[0]), AttemptStep: 1, ScheduledFor: retryAt}))
	if err := ex.Requeue(t.Context(), driver.Requeue{Lease: qLease(jobs[0]), AttemptStep: 1, LastError: jobErr(t, "first", ""), ScheduledFor: retryAt}); err != nil {
		t.Fatalf("Requeue a failed attempt: %v", err)
	}
	j := getJob(t, ex, jobs[0].ID)
	if j.Status != spine.StatusQueued || j.Attempt != 2 || !j.ScheduledFor.Equal(retryAt) || j.LastError == nil || j.LastError.Message != "first" || j.Worker != "" || j.Ping != nil {
		t.Fatalf("after Requeue: %s attempt %d at %v, last error %+v, worker %q, ping %v", j.Status, j.Attempt, j.ScheduledFor, j.LastError, j.Worker, j.Ping)
	}
	WaitWake(t, woken, "for the requeued job's tag")
	// A release: no attempt charged, the last error kept.
	if err := ex.Requeue(t.Context(), driver.Requeue{Lease: qLease(jobs[1]), ScheduledFor: qBase}); err != nil {
		t.Fatalf("Requeue a release: %v", err)
	}
	if j := getJob(t, ex, jobs[1].ID); j.Status != spine.StatusQueued || j.Attempt != 1 || j.LastError != nil {
		t.Fatalf("after a release: %s attempt %d, last error %+v", j.Status, j.Attempt, j.LastError)
	}
	// A marked job is never requeued.
	qMark(t, ex, jobs[2].ID)
	qNotOwner(t, "Requeue of a marked job", ex.Requeue(t.Context(), driver.Requeue{Lease: qLease(jobs[2]), ScheduledFor: qBase}))
	if j := getJob(t, ex, jobs[2].ID); j.Status != spine.StatusRunning {
		t.Fatalf("marked job after a refused Requeue: %s, want running", j.Status)
	}
}

func testQueueWriteFailures(t *testing.T, open Open) {
	t.Parallel()
	d := open(t)
	ex := d.Executor()
	for range 3 {
		qEnqueue(t, ex, "ws", "a")
	}
	jobs := qClaim(t, ex, "a", 3)
	qMark(t, ex, jobs[2].ID)
	done, stop := d.SubscribeCompletion(jobs[1].ID)
	defer stop()
	retryAt, end := qBase.Add(time.Hour), qBase.Add(time.Second)
	var statuses []spine.Status
	err := ex.Tx(t.Context(), func(ex driver.Executor) error {
		var err error
		statuses, err = ex.WriteFailures(t.Context(), []driver.Failure{
			{Lease: qLease(jobs[0]), Retry: true, At: retryAt, Error: jobErr(t, "again", "")},
			{Lease: qLease(jobs[1]), At: end, Error: jobErr(t, "last", "")},
			{Lease: qLease(jobs[2]), At: end, Error: jobErr(t, "marked", "")},
		})
		return err
	})
	if err != nil || len(statuses) != 3 || statuses[0] != "" || statuses[1] != spine.StatusFailure || statuses[2] != spine.StatusCanceled {
		t.Fatalf("WriteFailures: %v %v; want retried (empty), failure, canceled", statuses, err)
	}
	if j := getJob(t, ex, jobs[0].ID); j.Status != spine.StatusQueued || j.Attempt != 2 || !j.ScheduledFor.Equal(retryAt) || j.LastError == nil || j.LastError.Message != "again" {
		t.Fatalf("retried job: %s attempt %d at %v, last error %+v", j.Status, j.Attempt, j.ScheduledFor, j.LastError)
	}
	if j := getJob(t, ex, jobs[1].ID); j.Status != spine.StatusFailure || j.Error == nil || j.Error.Message != "last" || !j.CompletedAt.Equal(end) {
		t.Fatalf("failed job: %s, error %+v, at %v", j.Status, j.Error, j.CompletedAt)
	}
	WaitWake(t, done, "for the failed job's waiters")
	// A lease no longer held fails the whole call; nothing stays.
	err = ex.Tx(t.Context(), func(ex driver.Executor) error {
		_, err := ex.WriteFailures(t.Context(), []driver.Failure{{Lease: qLease(jobs[1]), At: end, Error: jobErr(t, "x", "")}})
		return err
	})
	qNotOwner(t, "WriteFailures", err)
}

func testQueueAppendLogAndLogs(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	qEnqueue(t, ex, "ws", "a")
	j := qClaim(t, ex, "a", 1)[0]
	for i, data := range []string{"one\n", "two\n", "three\n"} {
		at := qBase.Add(time.Duration(i) * time.Second)
		if err := ex.AppendLog(t.Context(), spine.AppendLogParams{Lease: qLease(j), Data: data, Now: at}); err != nil {
			t.Fatalf("AppendLog %d: %v", i, err)
		}
	}
	qNotOwner(t, "AppendLog", ex.AppendLog(t.Context(), spine.AppendLogParams{Lease: qLost(j), Data: "x", Now: qBase}))
	chunks, err := ex.Logs(t.Context(), j.ID, 1)
	if err != nil || len(chunks) != 2 {
		t.Fatalf("Logs after seq 1: %+v %v; want two chunks", chunks, err)
	}
	for i, c := range chunks {
		at := qBase.Add(time.Duration(i+1) * time.Second)
		if c.JobID != j.ID || c.Seq != int64(i+2) || c.Data != []string{"two\n", "three\n"}[i] || !c.CreatedAt.Equal(at) {
			t.Fatalf("chunk %d: %+v", i, c)
		}
	}
	if none, err := ex.Logs(t.Context(), uuid.New(), 0); err != nil || len(none) != 0 {
		t.Fatalf("Logs of an unknown job: %+v %v; want none", none, err)
	}
}

func testQueueGetJobAndAudit(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	id := qEnqueue(t, ex, "ws", "a")
	if j := getJob(t, ex, id); j.ID != id || j.Status != spine.StatusQueued || j.Workspace != "ws" || j.Pin.Retry != qPolicy || !j.ScheduledFor.Equal(qBase) {
		t.Fatalf("GetJob: %+v", j)
	}
	if _, err := ex.GetJob(t.Context(), "other", id); !errors.Is(err, spine.ErrNotFound) {
		t.Fatalf("GetJob in another workspace: %v, want ErrNotFound", err)
	}
	if _, err := ex.GetJob(t.Context(), "ws", uuid.New()); !errors.Is(err, spine.ErrNotFound) {
		t.Fatalf("GetJob of an unknown job: %v, want ErrNotFound", err)
	}
	qClaim(t, ex, "a", 1)
	qMark(t, ex, id)
	entries, err := ex.Audit(t.Context(), id)
	if err != nil || len(entries) != 1 || entries[0].JobID != id || entries[0].Action != "cancel" || entries[0].By != "op" || entries[0].Reason != "stop" {
		t.Fatalf("Audit: %+v %v; want the cancel", entries, err)
	}
	if none, err := ex.Audit(t.Context(), uuid.New()); err != nil || len(none) != 0 {
		t.Fatalf("Audit of an unknown job: %+v %v; want none", none, err)
	}
}

func testQueueListAndCountJobs(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	for range 3 {
		qEnqueue(t, ex, "ws", "a")
	}
	qEnqueue(t, ex, "other", "a")
	j := qClaim(t, ex, "a", 1)[0]
	if _, err := ex.Complete(t.Context(), driver.Completion{Lease: qLease(j), Status: spine.StatusFailure, Error: jobErr(t, "x", ""), Now: qBase}); err != nil {
		t.Fatal(err)
	}
	start := spine.JobCursor{CreatedAt: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), ID: uuid.Max}
	all, err := ex.ListJobs(t.Context(), spine.ListJobsParams{Workspace: "ws", After: &start, Limit: 10})
	if err != nil || len(all) != 3 {
		t.Fatalf("ListJobs: %d jobs, %v; want the workspace's 3", len(all), err)
	}
	for i := 1; i < len(all); i++ {
		a, b := all[i-1], all[i]
		if a.CreatedAt.Before(b.CreatedAt) || a.CreatedAt.Equal(b.CreatedAt) && a.ID.String() < b.ID.String() {
			t.Fatalf("ListJobs not newest first: %v before %v", a.ID, b.ID)
		}
	}
	page, err := ex.ListJobs(t.Context(), spine.ListJobsParams{Workspace: "ws", After: &spine.JobCursor{CreatedAt: all[0].CreatedAt, ID: all[0].ID}, Limit: 1})
	if err != nil || len(page) != 1 || page[0].ID != all[1].ID {
		t.Fatalf("ListJobs after the first: %v %v, want %v", page, err, all[1].ID)
	}
	failed, err := ex.ListJobs(t.Context(), spine.ListJobsParams{Workspace: "ws", Statuses: []spine.Status{spine.StatusFailure}, After: &start, Limit: 10})
	if err != nil || len(failed) != 1 || failed[0].ID != j.ID || failed[0].Status != spine.StatusFailure {
		t.Fatalf("ListJobs of failures: %v %v, want %v", failed, err, j.ID)
	}
	counts, err := ex.CountJobs(t.Context(), "ws")
	if err != nil || counts[spine.StatusQueued] != 2 || counts[spine.StatusFailure] != 1 || counts[spine.StatusRunning] != 0 || counts[spine.StatusSuccess] != 0 {
		t.Fatalf("CountJobs: %v %v; want 2 queued, 1 failure", counts, err)
	}
	empty, err := ex.CountJobs(t.Context(), "nobody")
	if err != nil {
		t.Fatalf("CountJobs of an empty workspace: %v", err)
	}
	for st, n := range empty {
		if n != 0 {
			t.Fatalf("CountJobs of an empty workspace: %d %s", n, st)
		}
	}
}
