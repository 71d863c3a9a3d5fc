package storetest

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// testList checks spine.Lister: filters, status across job_queue and
// job_completed, the (created_at, id) cursor, limits, workspace isolation
// and per-status counts.
func testList(t *testing.T, newStore newStoreFunc) {
	t.Run("Filters", func(t *testing.T) { t.Parallel(); testListFilters(t, newStore) })
	t.Run("Statuses", func(t *testing.T) { t.Parallel(); testListStatuses(t, newStore) })
	t.Run("CursorEqualTimes", func(t *testing.T) { t.Parallel(); testListCursor(t, newStore) })
	t.Run("Limits", func(t *testing.T) { t.Parallel(); testListLimits(t, newStore) })
}

// list runs ListJobs in the test workspace (limit MaxListLimit unless p
// says) and returns the ids in the order answered.
func (b *bundle) list(p spine.ListJobsParams) []uuid.UUID {
	b.t.Helper()
	if p.Workspace == "" {
		p.Workspace = testWorkspace
	}
	if p.Limit == 0 {
		p.Limit = spine.MaxListLimit
	}
	jobs, err := b.store.ListJobs(b.ctx, p)
	if err != nil {
		b.t.Fatalf("ListJobs(%+v): %v", p, err)
	}
	ids := make([]uuid.UUID, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
		if j.Workspace != p.Workspace {
			b.t.Fatalf("ListJobs in %s returned job %v of workspace %s", p.Workspace, j.ID, j.Workspace)
		}
		// The listing is the GetJob view, field for field.
		got, err := b.store.GetJob(b.ctx, p.Workspace, j.ID)
		if err != nil {
			b.t.Fatalf("GetJob(%v) of a listed job: %v", j.ID, err)
		}
		if !reflect.DeepEqual(got, j) {
			b.t.Fatalf("ListJobs view of %v differs from GetJob:\n list %+v\n get  %+v", j.ID, j, got)
		}
	}
	return ids
}

func withTrigger(k spine.TriggerKind) jobOption {
	return func(p *spine.EnqueueParams) { p.TriggerKind = k }
}

// requireOrder requires got to be exactly want, in order.
func requireOrder(t *testing.T, what string, got []uuid.UUID, want ...uuid.UUID) {
	t.Helper()
	if len(want) == 0 {
		want = []uuid.UUID{}
	}
	if got == nil {
		got = []uuid.UUID{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: got %v, want %v (newest first)", what, got, want)
	}
}

func testListFilters(t *testing.T, newStore newStoreFunc) {
	b := setup(t, newStore)
	step := func() time.Time { return b.clock.Advance(time.Millisecond) }
	plain := b.enqueue(withNow(step()))
	otherApp := b.enqueue(withNow(step()), withApp("other"))
	otherAction := b.enqueue(withNow(step()), withAction("sleep"))
	gpu := b.enqueue(withNow(step()), withTag("gpu"))
	sched := b.enqueue(withNow(step()), withTrigger(spine.TriggerSchedule))
	hidden := b.enqueue(withNow(step()), withWorkspace(otherWS))

	requireOrder(t, "no filter", b.list(spine.ListJobsParams{}), sched, gpu, otherAction, otherApp, plain)
	requireOrder(t, "app", b.list(spine.ListJobsParams{App: "other"}), otherApp)
	requireOrder(t, "app+action", b.list(spine.ListJobsParams{App: testApp, Action: "sleep"}), otherAction)
	requireOrder(t, "action", b.list(spine.ListJobsParams{Action: testAction}), sched, gpu, otherApp, plain)
	requireOrder(t, "tag", b.list(spine.ListJobsParams{Tag: "gpu"}), gpu)
	requireOrder(t, "trigger", b.list(spine.ListJobsParams{Trigger: spine.TriggerSchedule}), sched)
	requireOrder(t, "no match", b.list(spine.ListJobsParams{App: "nope"}))
	requireOrder(t, "other workspace", b.list(spine.ListJobsParams{Workspace: otherWS}), hidden)
	requireOrder(t, "unknown workspace", b.list(spine.ListJobsParams{Workspace: "ws-none"}))
}

func testListStatuses(t *testing.T, newStore newStoreFunc) {
	b := setup(t, newStore)
	step := func() time.Time { return b.clock.Advance(time.Millisecond) }
	running := b.enqueue(withNow(step()))
	success := b.enqueue(withNow(step()))
	canceled := b.enqueue(withNow(step()))
	queued := b.enqueue(withNow(step()))
	failed := b.enqueue(withNow(step()), withTag("gpu"))
	b.enqueue(withNow(step()), withWorkspace(otherWS)) // counted only in its own workspace

	now := step()
	if c := b.claimOne(now); c.ID != running {
		t.Fatalf("first claim took %v, want the oldest job %v", c.ID, running)
	}
	done := b.claimOne(now)
	b.complete(lease(done), now)
	b.cancel(canceled, "alice", "not needed", now)
	gpu := b.claim(spine.ClaimParams{Tags: []string{"gpu"}, Now: now})
	if len(gpu) != 1 {
		t.Fatalf("claim on gpu: %d jobs", len(gpu))
	}
	if out := b.fail(lease(gpu[0]), "boom", now); out.Status != spine.StatusFailure {
		t.Fatalf("fail: %+v, want failure", out)
	}

	st := func(s ...spine.Status) []uuid.UUID { return b.list(spine.ListJobsParams{Statuses: s}) }
	requireOrder(t, "queued", st(spine.StatusQueued), queued)
	requireOrder(t, "running", st(spine.StatusRunning), running)
	requireOrder(t, "success", st(spine.StatusSuccess), success)
	requireOrder(t, "queued+success", st(spine.StatusSuccess, spine.StatusQueued), queued, success)
	requireOrder(t, "running+canceled+failure", st(spine.StatusRunning, spine.StatusCanceled, spine.StatusFailure),
		failed, canceled, running)
	// Only failure and canceled: Postgres reads these from job_completed.
	requireOrder(t, "failure+canceled", st(spine.StatusFailure, spine.StatusCanceled), failed, canceled)
	requireOrder(t, "canceled", st(spine.StatusCanceled), canceled)
	requireOrder(t, "canceled after a cursor", b.list(spine.ListJobsParams{Statuses: []spine.Status{spine.StatusFailure, spine.StatusCanceled},
		After: &spine.JobCursor{CreatedAt: b.get(failed).CreatedAt, ID: failed}}), canceled)
	requireOrder(t, "status and tag", b.list(spine.ListJobsParams{Statuses: []spine.Status{spine.StatusFailure, spine.StatusQueued}, Tag: "gpu"}), failed)

	counts, err := b.store.CountJobs(b.ctx, testWorkspace)
	if err != nil {
		t.Fatalf("CountJobs: %v", err)
	}
	want := map[spine.Status]int64{spine.StatusQueued: 1, spine.StatusRunning: 1, spine.StatusSuccess: 1,
		spine.StatusFailure: 1, spine.StatusCanceled: 1}
	if !reflect.DeepEqual(counts, want) {
		t.Fatalf("CountJobs: %v, want %v", counts, want)
	}
	empty, err := b.store.CountJobs(b.ctx, "ws-none")
	if err != nil {
		t.Fatalf("CountJobs of an empty workspace: %v", err)
	}
	if len(empty) != 5 || empty[spine.StatusQueued] != 0 || empty[spine.StatusSuccess] != 0 {
		t.Fatalf("CountJobs of an empty workspace: %v, want five zeros", empty)
	}
}

// testListCursor pages through jobs that share one created_at: the id
// breaks the tie, so no job is skipped or repeated at a page boundary.
func testListCursor(t *testing.T, newStore newStoreFunc) {
	b := setup(t, newStore)
	same := b.clock.Advance(time.Second)
	var want []uuid.UUID
	for range 7 {
		want = append(want, b.enqueue(withNow(same)))
	}
	older := b.enqueue(withNow(same.Add(-time.Second)))
	// Newest first: equal times in descending id order, then the older job.
	sortIDsDesc(want)
	want = append(want, older)
	requireOrder(t, "one page", b.list(spine.ListJobsParams{}), want...)

	var got []uuid.UUID
	var after *spine.JobCursor
	for pages := 0; ; pages++ {
		if pages > len(want) {
			t.Fatalf("paging did not end after %d pages: %v", pages, got)
		}
		jobs, err := b.store.ListJobs(b.ctx, spine.ListJobsParams{Workspace: testWorkspace, Limit: 3, After: after})
		if err != nil {
			t.Fatalf("ListJobs page %d: %v", pages, err)
		}
		if len(jobs) > 3 {
			t.Fatalf("page of limit 3 holds %d jobs", len(jobs))
		}
		if len(jobs) == 0 {
			break
		}
		for _, j := range jobs {
			got = append(got, j.ID)
		}
		last := jobs[len(jobs)-1]
		after = &spine.JobCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	requireOrder(t, "paged by 3", got, want...)
}

func sortIDsDesc(ids []uuid.UUID) {
	for i := 1; i < len(ids); i++ {
		for k := i; k > 0 && bytes.Compare(ids[k-1][:], ids[k][:]) < 0; k-- {
			ids[k-1], ids[k] = ids[k], ids[k-1]
		}
	}
}

func testListLimits(t *testing.T, newStore newStoreFunc) {
	b := setup(t, newStore)
	for range 3 {
		b.enqueue(withNow(b.clock.Advance(time.Millisecond)))
	}
	if got := b.list(spine.ListJobsParams{Limit: 1}); len(got) != 1 {
		t.Fatalf("limit 1: %d jobs", len(got))
	}
	if got := b.list(spine.ListJobsParams{Limit: 2}); len(got) != 2 {
		t.Fatalf("limit 2: %d jobs", len(got))
	}
	bad := []spine.ListJobsParams{
		{Workspace: testWorkspace, Limit: 0},
		{Workspace: testWorkspace, Limit: -1},
		{Workspace: testWorkspace, Limit: spine.MaxListLimit + 1},
		{Workspace: "", Limit: 10},
		{Workspace: testWorkspace, Limit: 10, Statuses: []spine.Status{"done"}},
		{Workspace: testWorkspace, Limit: 10, Trigger: "cron"},
	}
	for _, p := range bad {
		_, err := b.store.ListJobs(b.ctx, p)
		requireErrorIs(t, err, spine.ErrInvalid, "ListJobs with a bad parameter")
	}
}
