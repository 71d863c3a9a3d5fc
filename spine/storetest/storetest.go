// Package storetest is the spine suite: one test per invariant of DESIGN
// §2, run over the store core on each driver (store/conformance_test.go):
//
//	func TestSpine(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) storetest.Store {
//			s := openFreshMigratedStore(t) // own schema or file
//			t.Cleanup(s.Close)
//			return s
//		})
//	}
//
// Every subtest asks newStore for a store of its own, so subtests run in
// parallel and never see each other's rows. Time is a fake clock passed as
// the explicit Now of every call: retries, leases and the reaper are tested
// without sleeping. Only the queue_health view reads the database clock, so
// the health tests place their fake times relative to the real time.
package storetest

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// Store is what the suite checks: the spine and its job listing (the API's
// job list needs both on every database).
type Store interface {
	spine.Store
	spine.Lister
}

// newStoreFunc opens a fresh, migrated, isolated store and registers its
// Close with t.Cleanup.
type newStoreFunc = func(t *testing.T) Store

// Run runs the whole conformance suite against the stores newStore opens.
// newStore must return a fresh, migrated store of its own (its own Postgres
// schema or SQLite file) and register its Close in t.Cleanup.
func Run(t *testing.T, newStore func(t *testing.T) Store) {
	t.Run("Migrate", func(t *testing.T) { testMigrate(t, newStore) })
	t.Run("Enqueue", func(t *testing.T) { testEnqueue(t, newStore) })
	t.Run("PinnedSchemas", func(t *testing.T) { testPinnedSchemas(t, newStore) })
	t.Run("Claim", func(t *testing.T) { testClaim(t, newStore) })
	t.Run("Heartbeat", func(t *testing.T) { testHeartbeat(t, newStore) })
	t.Run("Complete", func(t *testing.T) { testComplete(t, newStore) })
	t.Run("CompleteBatch", func(t *testing.T) { testCompleteBatch(t, newStore) })
	t.Run("Fail", func(t *testing.T) { testFail(t, newStore) })
	t.Run("FailBatch", func(t *testing.T) { testFailBatch(t, newStore) })
	t.Run("Release", func(t *testing.T) { testRelease(t, newStore) })
	t.Run("Cancel", func(t *testing.T) { testCancel(t, newStore) })
	t.Run("Reap", func(t *testing.T) { testReap(t, newStore) })
	t.Run("Reopen", func(t *testing.T) { testReopen(t, newStore) })
	t.Run("Sweep", func(t *testing.T) { testSweep(t, newStore) })
	t.Run("Coalesce", func(t *testing.T) { testCoalesce(t, newStore) })
	t.Run("Logs", func(t *testing.T) { testLogs(t, newStore) })
	t.Run("UnsafeText", func(t *testing.T) { testUnsafeText(t, newStore) })
	t.Run("Health", func(t *testing.T) { testHealth(t, newStore) })
	t.Run("Wakeup", func(t *testing.T) { testWakeup(t, newStore) })
	t.Run("Completion", func(t *testing.T) { testCompletion(t, newStore) })
	t.Run("Race", func(t *testing.T) { testRaces(t, newStore) })
	t.Run("List", func(t *testing.T) { testList(t, newStore) })
	t.Run("Messages", func(t *testing.T) { testMessages(t, newStore) })
	// The worker-loop suite lives in worker*.go (owned by the lead engineer),
	// who wires it in here:
	t.Run("Worker", func(t *testing.T) { runWorker(t, newStore) })
}

// Names every test uses. The suite's stores are private, so fixed names
// never collide.
const (
	testWorkspace = "ws-test"
	otherWS       = "ws-other"
	defaultWorker = "worker-1"
	testApp       = "hello"
	testAction    = "greet"

	// zombieTimeout and restartLimit are the reaper settings of DESIGN §2.
	zombieTimeout = 60 * time.Second
	restartLimit  = 3
)

// bundle is what a test needs: its own store, a context, a fake clock.
type bundle struct {
	t     *testing.T
	ctx   context.Context
	store Store
	clock *fakeClock
}

// setup opens a fresh store for t. Call t.Parallel() before it.
func setup(t *testing.T, newStore newStoreFunc) *bundle {
	t.Helper()
	s := newStore(t)
	if s == nil {
		t.Fatal("newStore returned a nil store")
	}
	return &bundle{t: t, ctx: t.Context(), store: s, clock: newClock()}
}

// fakeClock is the time every store call gets as its explicit Now. It
// starts at the real time (truncated to milliseconds, so every value
// survives the databases' microsecond precision) and moves only when a test
// advances it.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *fakeClock {
	return &fakeClock{now: time.Now().UTC().Truncate(time.Millisecond)}
}

// Now returns the current fake time.
func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d and returns the new time.
func (c *fakeClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// fullPin is a pin with every field set to a value that is easy to tell
// apart from a default, so a field a store drops shows up in round trips.
func fullPin() spine.Pin {
	return spine.Pin{
		GitSourceID:  "src-main",
		CommitSHA:    "0123456789abcdef0123456789abcdef01234567",
		AppKey:       testApp,
		ActionKey:    testAction,
		Entrypoint:   "src/main.ts",
		Runtime:      "bun",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["greeting"]}`),
		Timeout:      90500 * time.Millisecond,
		Tag:          spine.DefaultTag,
		Retry:        spine.RetryPolicy{MaxAttempts: 1, Backoff: 5 * time.Second, Factor: 5},
		Limits:       spine.Limits{Memory: 768 << 20, Pids: 200, CPU: 1.5},
		Env:          []spine.EnvVar{{Name: "MODE", Value: "fast"}, {Name: "TOKEN", Secret: "api_token"}},
		Warm:         &spine.Warm{MaxJobs: 50, Idle: 45 * time.Second},
	}
}

// retry3 is the retry policy the retry tests use: three attempts, 5 s
// base, factor 5 (delays about 5 s, then 25 s).
var retry3 = spine.RetryPolicy{MaxAttempts: 3, Backoff: 5 * time.Second, Factor: 5}

// jobOption changes one field of an enqueue request.
type jobOption func(*spine.EnqueueParams)

func withTag(tag string) jobOption      { return func(p *spine.EnqueueParams) { p.Pin.Tag = tag } }
func withPriority(n int) jobOption      { return func(p *spine.EnqueueParams) { p.Priority = n } }
func withNow(now time.Time) jobOption   { return func(p *spine.EnqueueParams) { p.Now = now } }
func withID(id uuid.UUID) jobOption     { return func(p *spine.EnqueueParams) { p.ID = id } }
func withWorkspace(ws string) jobOption { return func(p *spine.EnqueueParams) { p.Workspace = ws } }
func withAction(a string) jobOption     { return func(p *spine.EnqueueParams) { p.Pin.ActionKey = a } }
func withApp(a string) jobOption        { return func(p *spine.EnqueueParams) { p.Pin.AppKey = a } }
func withKey(key string) jobOption      { return func(p *spine.EnqueueParams) { p.CoalesceKey = key } }

func withRetry(r spine.RetryPolicy) jobOption {
	return func(p *spine.EnqueueParams) { p.Pin.Retry = r }
}

func withScheduledFor(at time.Time) jobOption {
	return func(p *spine.EnqueueParams) { p.ScheduledFor = at }
}

func withInput(s string) jobOption {
	return func(p *spine.EnqueueParams) { p.Input = json.RawMessage(s) }
}

// params builds an enqueue request in the test workspace with the full pin,
// at the clock's current time, then applies opts.
func (b *bundle) params(opts ...jobOption) spine.EnqueueParams {
	p := spine.EnqueueParams{
		Workspace:   testWorkspace,
		TriggerKind: spine.TriggerAPI,
		TriggerRef:  "req-1",
		CreatedBy:   "tester",
		Input:       json.RawMessage(`{"name":"world"}`),
		Pin:         fullPin(),
		Now:         b.clock.Now(),
	}
	for _, o := range opts {
		o(&p)
	}
	return p
}

// enqueue enqueues one job built from opts and returns its id.
func (b *bundle) enqueue(opts ...jobOption) uuid.UUID {
	b.t.Helper()
	res, err := b.store.Enqueue(b.ctx, b.params(opts...))
	if err != nil {
		b.t.Fatalf("Enqueue: %v", err)
	}
	if res.ID == uuid.Nil {
		b.t.Fatal("Enqueue returned a nil job id")
	}
	return res.ID
}

// enqueueN enqueues n identical jobs with EnqueueBatch, in chunks, and
// returns their ids in order.
func (b *bundle) enqueueN(n int, opts ...jobOption) []uuid.UUID {
	b.t.Helper()
	const chunk = 500
	ids := make([]uuid.UUID, 0, n)
	for len(ids) < n {
		size := min(chunk, n-len(ids))
		ps := make([]spine.EnqueueParams, size)
		for i := range ps {
			ps[i] = b.params(opts...)
		}
		res, err := b.store.EnqueueBatch(b.ctx, ps)
		if err != nil {
			b.t.Fatalf("EnqueueBatch of %d jobs: %v", size, err)
		}
		if len(res) != size {
			b.t.Fatalf("EnqueueBatch of %d jobs returned %d results", size, len(res))
		}
		for _, r := range res {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// claim runs Claim with defaults for the fields p leaves zero (worker-1,
// the default tag, limit 1, the clock's time) and checks the one property
// every claim has: never more jobs than asked.
func (b *bundle) claim(p spine.ClaimParams) []spine.ClaimedJob {
	b.t.Helper()
	if p.Worker == "" {
		p.Worker = defaultWorker
	}
	if p.Tags == nil {
		p.Tags = []string{spine.DefaultTag}
	}
	if p.Limit == 0 {
		p.Limit = 1
	}
	if p.Now.IsZero() {
		p.Now = b.clock.Now()
	}
	jobs, err := b.store.Claim(b.ctx, p)
	if err != nil {
		b.t.Fatalf("Claim(tags %v, limit %d): %v", p.Tags, p.Limit, err)
	}
	if len(jobs) > p.Limit {
		b.t.Fatalf("Claim(limit %d) returned %d jobs: more than asked", p.Limit, len(jobs))
	}
	return jobs
}

// claimOne claims on the default tag at now and requires exactly one job.
func (b *bundle) claimOne(now time.Time) spine.ClaimedJob {
	b.t.Helper()
	jobs := b.claim(spine.ClaimParams{Now: now})
	if len(jobs) != 1 {
		b.t.Fatalf("Claim at %v: got %d jobs, want exactly 1", now, len(jobs))
	}
	return jobs[0]
}

// claimNone requires that nothing on the default tag is claimable at now.
func (b *bundle) claimNone(now time.Time, why string) {
	b.t.Helper()
	if jobs := b.claim(spine.ClaimParams{Now: now, Limit: 100}); len(jobs) != 0 {
		b.t.Fatalf("Claim at %v returned %d jobs (first %v), want none: %s", now, len(jobs), jobs[0].ID, why)
	}
}

// get reads a job that must exist.
func (b *bundle) get(id uuid.UUID) spine.Job {
	b.t.Helper()
	j, err := b.store.GetJob(b.ctx, testWorkspace, id)
	if err != nil {
		b.t.Fatalf("GetJob(%v): %v", id, err)
	}
	if j.ID != id {
		b.t.Fatalf("GetJob(%v) returned job %v", id, j.ID)
	}
	return j
}

// requireGone requires GetJob of id to answer ErrNotFound.
func (b *bundle) requireGone(id uuid.UUID, why string) {
	b.t.Helper()
	_, err := b.store.GetJob(b.ctx, testWorkspace, id)
	requireErrorIs(b.t, err, spine.ErrNotFound, "GetJob("+id.String()+") "+why)
}

// requireStatus reads id and requires status.
func (b *bundle) requireStatus(id uuid.UUID, want spine.Status, why string) spine.Job {
	b.t.Helper()
	j := b.get(id)
	if j.Status != want {
		b.t.Fatalf("job %v: status %q, want %q (%s)", id, j.Status, want, why)
	}
	return j
}

// complete completes a job with a fixed result and requires success.
func (b *bundle) complete(l spine.Lease, now time.Time) {
	b.t.Helper()
	b.completeAs(l, now, spine.StatusSuccess)
}

// completeAs completes a job with a fixed result and requires the status
// Complete answers (canceled for a job carrying the cancel mark).
func (b *bundle) completeAs(l spine.Lease, now time.Time, want spine.Status) {
	b.t.Helper()
	st, err := b.store.Complete(b.ctx, spine.CompleteParams{Lease: l, Result: json.RawMessage(`{"ok":true}`), Now: now})
	if err != nil {
		b.t.Fatalf("Complete(%v): %v", l.JobID, err)
	}
	if st != want {
		b.t.Fatalf("Complete(%v): status %q, want %q", l.JobID, st, want)
	}
}

// fail records a failed attempt and returns what it did.
func (b *bundle) fail(l spine.Lease, msg string, now time.Time) spine.FailOutcome {
	b.t.Helper()
	out, err := b.store.Fail(b.ctx, spine.FailParams{Lease: l, Error: spine.JobError{Message: msg, Kind: "test"}, Now: now})
	if err != nil {
		b.t.Fatalf("Fail(%v, %q): %v", l.JobID, msg, err)
	}
	return out
}

// cancel cancels a job in the test workspace and returns the outcome.
func (b *bundle) cancel(id uuid.UUID, by, reason string, now time.Time) spine.CancelOutcome {
	b.t.Helper()
	out, err := b.store.Cancel(b.ctx, spine.CancelParams{Workspace: testWorkspace, JobID: id, By: by, Reason: reason, Now: now})
	if err != nil {
		b.t.Fatalf("Cancel(%v): %v", id, err)
	}
	return out
}

// reap runs one reaper pass at now with the default timeout and limit.
func (b *bundle) reap(now time.Time) spine.ReapResult {
	b.t.Helper()
	return b.reapWith(spine.ReapParams{Now: now, ZombieTimeout: zombieTimeout, RestartLimit: restartLimit})
}

// reapWith runs one reaper pass with explicit parameters.
func (b *bundle) reapWith(p spine.ReapParams) spine.ReapResult {
	b.t.Helper()
	res, err := b.store.Reap(b.ctx, p)
	if err != nil {
		b.t.Fatalf("Reap(now %v): %v", p.Now, err)
	}
	return res
}

// heartbeat renews leases at now and returns the results by job id.
func (b *bundle) heartbeat(now time.Time, leases ...spine.Lease) map[uuid.UUID]spine.HeartbeatResult {
	b.t.Helper()
	res, err := b.store.Heartbeat(b.ctx, spine.HeartbeatParams{Leases: leases, Now: now})
	if err != nil {
		b.t.Fatalf("Heartbeat: %v", err)
	}
	out := make(map[uuid.UUID]spine.HeartbeatResult, len(res))
	for _, r := range res {
		if _, dup := out[r.JobID]; dup {
			b.t.Fatalf("Heartbeat returned job %v twice", r.JobID)
		}
		out[r.JobID] = r
	}
	return out
}

// lease returns the lease of a claimed job.
func lease(j spine.ClaimedJob) spine.Lease {
	return spine.Lease{JobID: j.ID, ClaimToken: j.ClaimToken}
}

// healthByTag reads the queue_health view, keyed by workspace/tag.
func (b *bundle) healthByTag() map[string]spine.TagHealth {
	b.t.Helper()
	rows, err := b.store.Health(b.ctx)
	if err != nil {
		b.t.Fatalf("Health: %v", err)
	}
	out := make(map[string]spine.TagHealth, len(rows))
	for _, r := range rows {
		out[r.Workspace+"/"+r.Tag] = r
	}
	return out
}

// requireEmptyQueue requires that the health view shows no job at all in
// the queue: no waiting, scheduled or running row anywhere.
func (b *bundle) requireEmptyQueue(why string) {
	b.t.Helper()
	for k, h := range b.healthByTag() {
		if h.Waiting+h.Scheduled+h.Running != 0 {
			b.t.Fatalf("queue_health %s shows %d waiting, %d scheduled, %d running; want an empty queue: %s",
				k, h.Waiting, h.Scheduled, h.Running, why)
		}
	}
}
