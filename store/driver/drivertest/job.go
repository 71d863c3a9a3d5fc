package drivertest

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

var _ = register("Job", testJob)

// jobBase is the job cases' enqueue time, on a whole second so both
// databases keep it exactly.
var jobBase = time.Date(2031, 5, 6, 7, 8, 0, 0, time.UTC)

// jobParams is a prepared enqueue of app/act on tag in workspace ws, with
// key as its coalesce key ("" for none).
func jobParams(t *testing.T, ws, tag, key string) spine.EnqueueParams {
	t.Helper()
	p, err := spine.PrepareEnqueue(spine.EnqueueParams{
		Workspace: ws, TriggerKind: spine.TriggerAPI, TriggerRef: "ref", CreatedBy: "alice",
		Input: json.RawMessage(`{"n":1}`), Priority: 3, CoalesceKey: key, Now: jobBase,
		Pin: spine.Pin{
			AppKey: "app", ActionKey: "act", Tag: tag, Timeout: time.Minute,
			InputSchema: json.RawMessage(`{"type":"object"}`),
			Retry:       spine.RetryPolicy{MaxAttempts: 2, Backoff: time.Second, Factor: 2},
		},
	}, time.Time{})
	if err != nil {
		t.Fatalf("PrepareEnqueue: %v", err)
	}
	return p
}

// mustInsert inserts p through ex and requires it inserted.
func mustInsert(t *testing.T, ex driver.Executor, p spine.EnqueueParams) spine.EnqueueResult {
	t.Helper()
	res, ok, err := ex.EnqueueInsert(t.Context(), p, true)
	if err != nil || !ok {
		t.Fatalf("EnqueueInsert = %v, inserted %v; want inserted", err, ok)
	}
	return res
}

// requireJob requires job id of ws to read back with status and input.
func requireJob(t *testing.T, ex driver.Executor, ws string, id uuid.UUID, status spine.Status, input string) spine.Job {
	t.Helper()
	j, err := ex.GetJob(t.Context(), ws, id)
	if err != nil {
		t.Fatalf("GetJob(%s): %v", id, err)
	}
	if j.Status != status || !sameJSON(j.Input, input) {
		t.Fatalf("job %s: status %s, input %s; want %s, %s", id, j.Status, j.Input, status, input)
	}
	return j
}

// testJob checks the enqueue and requeue operations.
func testJob(t *testing.T, open Open) {
	t.Run("EnqueueInsert", func(t *testing.T) { testJobEnqueueInsert(t, open) })
	t.Run("EnqueueInsertRepeatedID", func(t *testing.T) { testJobEnqueueInsertRepeatedID(t, open) })
	t.Run("EnqueueInsertKeyTaken", func(t *testing.T) { testJobEnqueueInsertKeyTaken(t, open) })
	t.Run("EnqueueCoalesce", func(t *testing.T) { testJobEnqueueCoalesce(t, open) })
	t.Run("EnqueueCoalesceMiss", func(t *testing.T) { testJobEnqueueCoalesceMiss(t, open) })
	t.Run("EnqueueCoalesceOtherPin", func(t *testing.T) { testJobEnqueueCoalesceOtherPin(t, open) })
	t.Run("EnqueueCoalesceRelease", func(t *testing.T) { testJobEnqueueCoalesceRelease(t, open) })
	t.Run("EnqueueInsertBatch", func(t *testing.T) { testJobEnqueueInsertBatch(t, open) })
	t.Run("EnqueueInsertBatchRepeatedID", func(t *testing.T) { testJobEnqueueInsertBatchRepeatedID(t, open) })
	t.Run("RequeueJobLock", func(t *testing.T) { testJobRequeueJobLock(t, open) })
	t.Run("RequeueJobLockNotWaiting", func(t *testing.T) { testJobRequeueJobLockNotWaiting(t, open) })
}

func testJobEnqueueInsert(t *testing.T, open Open) {
	t.Parallel()
	d := open(t)
	ex := d.Executor()
	wake, stop := d.Subscribe([]string{"jobs"})
	defer stop()
	p := jobParams(t, "ws", "jobs", "")
	res := mustInsert(t, ex, p)
	if res.ID != p.ID || res.Generation != 1 || res.Coalesced {
		t.Fatalf("EnqueueInsert = %+v, want id %s, generation 1", res, p.ID)
	}
	j := requireJob(t, ex, "ws", p.ID, spine.StatusQueued, `{"n":1}`)
	if j.Pin.Tag != "jobs" || j.Priority != 3 || j.CreatedBy != "alice" || !j.CreatedAt.Equal(jobBase) ||
		!j.ScheduledFor.Equal(jobBase) || string(j.Pin.InputSchema) != `{"type":"object"}` {
		t.Fatalf("job read back as %+v", j)
	}
	WaitWake(t, wake, "on the job's tag")
}

func testJobEnqueueInsertRepeatedID(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	p := jobParams(t, "ws", "jobs", "")
	mustInsert(t, ex, p)
	if _, _, err := ex.EnqueueInsert(t.Context(), p, true); !errors.Is(err, spine.ErrConflict) {
		t.Fatalf("EnqueueInsert of a repeated id = %v, want ErrConflict", err)
	}
}

func testJobEnqueueInsertKeyTaken(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	first := mustInsert(t, ex, jobParams(t, "ws", "jobs", "k"))
	p := jobParams(t, "ws", "jobs", "k")
	res, ok, err := ex.EnqueueInsert(t.Context(), p, true)
	if err != nil || ok || res.ID != uuid.Nil {
		t.Fatalf("EnqueueInsert with a held key = %+v, %v, %v; want nothing inserted, no error", res, ok, err)
	}
	if _, err := ex.GetJob(t.Context(), "ws", p.ID); !errors.Is(err, spine.ErrNotFound) {
		t.Fatalf("GetJob of the refused job = %v, want ErrNotFound: nothing written", err)
	}
	// Another workspace's key is another key.
	mustInsert(t, ex, jobParams(t, "other", "jobs", "k"))
	requireJob(t, ex, "ws", first.ID, spine.StatusQueued, `{"n":1}`)
}

func testJobEnqueueCoalesce(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	first := mustInsert(t, ex, jobParams(t, "ws", "jobs", "k"))
	p := jobParams(t, "ws", "jobs", "k")
	p.Input = json.RawMessage(`{"n":2}`)
	res, ok, err := ex.EnqueueCoalesce(t.Context(), p, true)
	if err != nil || !ok {
		t.Fatalf("EnqueueCoalesce = %v, ok %v; want folded", err, ok)
	}
	if res.ID != first.ID || res.Generation != 2 || !res.Coalesced {
		t.Fatalf("EnqueueCoalesce = %+v, want job %s, generation 2, coalesced", res, first.ID)
	}
	requireJob(t, ex, "ws", first.ID, spine.StatusQueued, `{"n":2}`)
}

func testJobEnqueueCoalesceMiss(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	mustInsert(t, ex, jobParams(t, "ws", "jobs", "other"))
	res, ok, err := ex.EnqueueCoalesce(t.Context(), jobParams(t, "ws", "jobs", "k"), true)
	if err != nil || ok || res.ID != uuid.Nil {
		t.Fatalf("EnqueueCoalesce with no job holding the key = %+v, %v, %v; want a miss", res, ok, err)
	}
}

func testJobEnqueueCoalesceOtherPin(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	first := mustInsert(t, ex, jobParams(t, "ws", "jobs", "k"))
	p := jobParams(t, "ws", "jobs", "k")
	p.Pin.CommitSHA, p.Input = "c-moved", json.RawMessage(`{"n":2}`)
	res, ok, err := ex.EnqueueCoalesce(t.Context(), p, true)
	if err != nil || ok || res.ID != uuid.Nil {
		t.Fatalf("EnqueueCoalesce with another pin = %+v, %v, %v; want a miss", res, ok, err)
	}
	requireJob(t, ex, "ws", first.ID, spine.StatusQueued, `{"n":1}`)
}

func testJobEnqueueCoalesceRelease(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	first := mustInsert(t, ex, jobParams(t, "ws", "jobs", "k"))
	same := jobParams(t, "ws", "jobs", "k")
	if released, err := ex.EnqueueCoalesceRelease(t.Context(), same); err != nil || released {
		t.Fatalf("EnqueueCoalesceRelease with the holder's pin = %v, %v; want nothing released", released, err)
	}
	moved := jobParams(t, "ws", "jobs", "k")
	moved.Pin.CommitSHA, moved.Now = "c-moved", jobBase.Add(time.Second)
	if released, err := ex.EnqueueCoalesceRelease(t.Context(), moved); err != nil || !released {
		t.Fatalf("EnqueueCoalesceRelease with another pin = %v, %v; want the key released", released, err)
	}
	mustInsert(t, ex, moved)
	j := requireJob(t, ex, "ws", first.ID, spine.StatusQueued, `{"n":1}`)
	if j.CoalesceKey != "k" || j.SupersededBy != moved.ID {
		t.Fatalf("released job: key %q superseded by %v; want k and %v", j.CoalesceKey, j.SupersededBy, moved.ID)
	}
}

func testJobEnqueueInsertBatch(t *testing.T, open Open) {
	t.Parallel()
	d := open(t)
	ex := d.Executor()
	wake, stop := d.Subscribe([]string{"b"})
	defer stop()
	ps := []spine.EnqueueParams{jobParams(t, "ws", "a", ""), jobParams(t, "ws", "b", ""), jobParams(t, "ws", "a", "")}
	err := ex.Tx(t.Context(), func(ex driver.Executor) error {
		return ex.EnqueueInsertBatch(t.Context(), ps, []string{"a", "b"})
	})
	if err != nil {
		t.Fatalf("EnqueueInsertBatch: %v", err)
	}
	for _, p := range ps {
		requireJob(t, ex, "ws", p.ID, spine.StatusQueued, `{"n":1}`)
	}
	WaitWake(t, wake, "on tag b")
	// An empty batch still wakes its tags.
	wake, stop = d.Subscribe([]string{"c"})
	defer stop()
	if err := ex.EnqueueInsertBatch(t.Context(), nil, []string{"c"}); err != nil {
		t.Fatalf("EnqueueInsertBatch of no job: %v", err)
	}
	WaitWake(t, wake, "on tag c")
}

func testJobEnqueueInsertBatchRepeatedID(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	first := jobParams(t, "ws", "jobs", "")
	mustInsert(t, ex, first)
	fresh := jobParams(t, "ws", "jobs", "")
	err := ex.Tx(t.Context(), func(ex driver.Executor) error {
		return ex.EnqueueInsertBatch(t.Context(), []spine.EnqueueParams{fresh, first}, []string{"jobs"})
	})
	if !errors.Is(err, spine.ErrConflict) {
		t.Fatalf("EnqueueInsertBatch with a repeated id = %v, want ErrConflict", err)
	}
	if _, err := ex.GetJob(t.Context(), "ws", fresh.ID); !errors.Is(err, spine.ErrNotFound) {
		t.Fatalf("GetJob of the batch's other job = %v, want ErrNotFound: the batch rolled back", err)
	}
}

func testJobRequeueJobLock(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	p := jobParams(t, "ws", "jobs", "k")
	p.ScheduledFor = jobBase.Add(time.Hour)
	mustInsert(t, ex, p)
	var q catalog.EnqueueRequest
	var status spine.Status
	err := ex.Tx(t.Context(), func(ex driver.Executor) error {
		var err error
		q, status, err = ex.RequeueJobLock(t.Context(), "ws", p.ID)
		return err
	})
	if err != nil {
		t.Fatalf("RequeueJobLock: %v", err)
	}
	if status != spine.StatusQueued || q.Workspace != "ws" || q.App != "app" || q.Action != "act" ||
		q.TriggerKind != spine.TriggerAPI || q.TriggerRef != "ref" || q.CreatedBy != "alice" ||
		!sameJSON(q.Input, `{"n":1}`) || q.Priority != 3 || q.CoalesceKey != "k" ||
		!q.ScheduledFor.Equal(p.ScheduledFor) || q.ID != uuid.Nil {
		t.Fatalf("RequeueJobLock = %+v, %s", q, status)
	}
}

func testJobRequeueJobLockNotWaiting(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	running := mustInsert(t, ex, jobParams(t, "ws", "run", ""))
	if jobs, err := ex.Claim(t.Context(), spine.ClaimParams{Worker: "w", Tags: []string{"run"}, Limit: 1, Now: jobBase.Add(time.Minute)}); err != nil || len(jobs) != 1 {
		t.Fatalf("Claim: %v (%d jobs)", err, len(jobs))
	}
	canceled := mustInsert(t, ex, jobParams(t, "ws", "jobs", ""))
	if err := ex.CancelWaiting(t.Context(), spine.CancelParams{Workspace: "ws", JobID: canceled.ID, By: "op"}); err != nil {
		t.Fatalf("CancelWaiting: %v", err)
	}
	for _, c := range []struct {
		what string
		ws   string
		id   uuid.UUID
		want spine.Status
	}{
		{"a running job", "ws", running.ID, spine.StatusRunning},
		{"a finished job", "ws", canceled.ID, spine.StatusCanceled},
		{"an unknown job", "ws", uuid.New(), ""},
		{"another workspace's job", "other", running.ID, ""},
	} {
		req, status, err := ex.RequeueJobLock(t.Context(), c.ws, c.id)
		if err != nil || status != c.want {
			t.Errorf("RequeueJobLock of %s = %s, %v; want %q", c.what, status, err, c.want)
		}
		if c.want != spine.StatusRunning && req.App != "" {
			t.Errorf("RequeueJobLock of %s returned a request %+v", c.what, req)
		}
	}
}

// sameJSON reports whether v is the JSON want, whatever its spacing (jsonb
// gives its own).
func sameJSON(v json.RawMessage, want string) bool {
	var a, b bytes.Buffer
	return json.Compact(&a, v) == nil && json.Compact(&b, []byte(want)) == nil && a.String() == b.String()
}
