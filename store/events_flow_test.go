package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/server"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// eventsWS is the workspace of the events tests; otherEventsWS holds a
// job whose events a workspace read must not see.
const (
	eventsWS       = "ws-events"
	otherEventsWS  = "ws-events-other"
	silentEventsWS = "ws-events-silent"
)

// eventFlow drives one store through transitions on a fake clock and
// checks, after each, the events it wrote: exactly those, in order, each
// with the job as GET /api/w/{ws}/jobs/{id} shows it then, minus input.
type eventFlow struct {
	t     *testing.T
	s     *Store
	now   time.Time
	after int64
	// stale names a job whose state its next expect does not compare:
	// one a later change of the same transaction touched.
	stale uuid.UUID
}

// Both workspaces get a sink: a workspace records its events only while it
// has one (silentEventsWS has none).
func newEventFlow(t *testing.T, s *Store) *eventFlow {
	for _, ws := range []string{eventsWS, otherEventsWS} {
		if _, err := s.CreateSink(t.Context(), sink.Sink{Workspace: ws, ID: "n", Kind: sink.KindNATS,
			URL: "nats://127.0.0.1:4222", Subject: "windforce", Enabled: true}); err != nil {
			t.Fatal(err)
		}
	}
	return &eventFlow{t: t, s: s, now: time.Date(2026, 12, 1, 12, 0, 0, 123456000, time.UTC)}
}

// tick moves the clock on and returns the new time.
func (f *eventFlow) tick(d time.Duration) time.Time {
	f.now = f.now.Add(d)
	return f.now
}

// params is a job of the events workspace on its own tag (so each claim
// picks the job meant), with limits, schemas and a retry policy.
func (f *eventFlow) params(tag string, mod ...func(*spine.EnqueueParams)) spine.EnqueueParams {
	p := spine.EnqueueParams{
		Workspace: eventsWS, TriggerKind: spine.TriggerAPI, TriggerRef: "req", CreatedBy: "tester",
		Input: json.RawMessage(`{"name":"secret input"}`),
		Pin: spine.Pin{
			GitSourceID: "src", CommitSHA: "0123456789abcdef0123456789abcdef01234567",
			AppKey: "hello", ActionKey: "greet", Entrypoint: "src/main.ts", Runtime: "bun",
			InputSchema: json.RawMessage(`{"type":"object"}`), Timeout: 90500 * time.Millisecond, Tag: tag,
			Retry:  spine.RetryPolicy{MaxAttempts: 2, Backoff: time.Second, Factor: 2},
			Limits: spine.Limits{Memory: 768 << 20, Pids: 200, CPU: 1.5},
			Env:    []spine.EnvVar{{Name: "EMPTY"}, {Name: "REGION", Value: "eu-west-1"}},
			Warm:   &spine.Warm{MaxJobs: 7, Idle: 90 * time.Second},
		},
		Priority: 3, Now: f.now,
	}
	for _, m := range mod {
		m(&p)
	}
	return p
}

func (f *eventFlow) enqueue(p spine.EnqueueParams) uuid.UUID {
	f.t.Helper()
	res, err := f.s.Enqueue(f.t.Context(), p)
	if err != nil {
		f.t.Fatalf("enqueue: %v", err)
	}
	return res.ID
}

func (f *eventFlow) claim(tag string) spine.ClaimedJob {
	f.t.Helper()
	jobs, err := f.s.Claim(f.t.Context(), spine.ClaimParams{Worker: "w1", Tags: []string{tag}, Limit: 1, Now: f.tick(time.Second)})
	if err != nil || len(jobs) != 1 {
		f.t.Fatalf("claim %s: %v, %d jobs", tag, err, len(jobs))
	}
	return jobs[0]
}

// want is one expected event: its type and job.
type want struct {
	typ events.Type
	job uuid.UUID
}

// expect reads the events written since the last expect (polling: on
// Postgres an event shows once the transactions open at its commit have
// ended) and checks they are exactly ws, in order, each with its job's
// API view as it is now. It returns them.
func (f *eventFlow) expect(what string, ws ...want) []events.Event {
	f.t.Helper()
	var got []events.Event
	deadline := time.Now().Add(20 * time.Second)
	for {
		evs, err := f.s.EventsAfter(f.t.Context(), eventsWS, f.after, 100)
		if err != nil {
			f.t.Fatalf("%s: EventsAfter: %v", what, err)
		}
		got = append(got, evs...)
		if len(evs) > 0 {
			f.after = evs[len(evs)-1].Seq
		}
		if len(got) >= len(ws) && len(evs) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // polling the outbox, as a reader does
	}
	if len(got) != len(ws) {
		f.t.Fatalf("%s: %d events %v, want %v", what, len(got), eventNames(got), ws)
	}
	for i, w := range ws {
		e := got[i]
		if e.Type != w.typ || e.Subject != w.job.String() || e.Workspace != eventsWS {
			f.t.Fatalf("%s: event %d is %s %s in %s, want %s %s", what, i, e.Type, e.Subject, e.Workspace, w.typ, w.job)
		}
		if e.ID.Version() != 7 || e.Time.IsZero() {
			f.t.Errorf("%s: event %d: id %s (version %d), time %s", what, i, e.ID, e.ID.Version(), e.Time)
		}
	}
	// The data of each job's last event is the job as it is now.
	last := map[string]events.Event{}
	for _, e := range got {
		last[e.Subject] = e
	}
	for _, e := range last {
		if e.Subject != f.stale.String() {
			f.requireAPIView(what, e)
		}
	}
	f.stale = uuid.Nil
	return got
}

func eventNames(evs []events.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = string(e.Type) + " " + e.Subject
	}
	return out
}

// requireAPIView checks e's data against the job's API view (what GET
// /api/w/{ws}/jobs/{id} answers, the token labels aside) minus input.
func (f *eventFlow) requireAPIView(what string, e events.Event) {
	f.t.Helper()
	id, err := uuid.Parse(e.Subject)
	if err != nil {
		f.t.Fatalf("%s: subject %q: %v", what, e.Subject, err)
	}
	j, err := f.s.GetJob(f.t.Context(), eventsWS, id)
	if err != nil {
		f.t.Fatalf("%s: get job: %v", what, err)
	}
	view, err := json.Marshal(server.ViewJob(j))
	if err != nil {
		f.t.Fatal(err)
	}
	wantData, gotData := normalize(f.t, view), normalize(f.t, e.Data)
	if _, ok := wantData["input"]; !ok {
		f.t.Fatalf("%s: the API view has no input to leave out: %s", what, view)
	}
	delete(wantData, "input")
	if !reflect.DeepEqual(gotData, wantData) {
		var diff []string
		for k := range union(gotData, wantData) {
			if !reflect.DeepEqual(gotData[k], wantData[k]) {
				diff = append(diff, fmt.Sprintf("%s: event %#v, API %#v", k, gotData[k], wantData[k]))
			}
		}
		f.t.Fatalf("%s: %s data is not the API view minus input:\n%s", what, e.Type, strings.Join(diff, "\n"))
	}
}

// normalize decodes a JSON object with its times as instants in UTC, so
// that a time the driver read in the local zone compares equal.
func normalize(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	for _, k := range []string{"created_at", "scheduled_for", "started_at", "completed_at"} {
		if s, ok := m[k].(string); ok {
			at, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				t.Fatalf("%s %q: %v", k, s, err)
			}
			m[k] = at.UTC().Format(time.RFC3339Nano)
		}
	}
	return m
}

func union(a, b map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// TestEventsOfEveryTransition walks every transition of DESIGN §9 and
// checks that each writes exactly its events, in order, with the job's
// API view as data, on both databases.
func TestEventsOfEveryTransition(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		// The catalog a requeue resolves again, synced before the sinks
		// exist: its source.synced is TestSourceEvents' business.
		if err := s.PutSource(ctx, catalog.Source{Workspace: eventsWS, ID: "src", URL: "file:///r.git", Branch: "main"}); err != nil {
			t.Fatal(err)
		}
		if err := s.ApplySync(ctx, catalog.SyncParams{Workspace: eventsWS, SourceID: "src", Commit: strings.Repeat("c", 40),
			Apps: []catalog.App{{Key: "hello", Entrypoint: "main.ts", Runtime: "bun", Timeout: time.Minute, Tag: "t-moved",
				Retry: spine.DefaultRetry, Actions: []catalog.Action{{Key: "greet"}}}}}); err != nil {
			t.Fatal(err)
		}
		f := newEventFlow(t, s)

		// Another workspace's job: never in this workspace's reads.
		other := f.enqueue(f.params("t-other", func(p *spine.EnqueueParams) { p.Workspace = otherEventsWS }))
		// A workspace without a sink records nothing: its job is never read.
		silent := f.enqueue(f.params("t-silent", func(p *spine.EnqueueParams) { p.Workspace = silentEventsWS }))

		a := f.enqueue(f.params("t-a"))
		f.expect("enqueue", want{events.JobQueued, a})

		ps := []spine.EnqueueParams{f.params("t-b"), f.params("t-c")}
		res, err := s.EnqueueBatch(ctx, ps)
		if err != nil {
			t.Fatal(err)
		}
		b, c := res[0].ID, res[1].ID
		f.expect("enqueue batch", want{events.JobQueued, b}, want{events.JobQueued, c})

		keyed := func(p *spine.EnqueueParams) { p.CoalesceKey = "k" }
		d := f.enqueue(f.params("t-d", keyed))
		f.expect("coalesced enqueue", want{events.JobQueued, d})
		if folded := f.enqueue(f.params("t-d", keyed)); folded != d {
			t.Fatalf("coalesced into %s, want %s", folded, d)
		}
		f.expect("a request that folds writes none")

		ja := f.claim("t-a")
		f.expect("claim", want{events.JobStarted, a})
		if _, err := s.Complete(ctx, spine.CompleteParams{Lease: lease(ja), Result: json.RawMessage(`{"greeting":"hi"}`), Now: f.tick(time.Second)}); err != nil {
			t.Fatal(err)
		}
		f.expect("complete", want{events.JobSucceeded, a})

		jb := f.claim("t-b")
		if _, err := s.Fail(ctx, spine.FailParams{Lease: lease(jb), Error: spine.JobError{Message: "boom"}, Now: f.tick(time.Second)}); err != nil {
			t.Fatal(err)
		}
		f.expect("a failed attempt with attempts left", want{events.JobStarted, b}, want{events.JobRetrying, b})
		f.tick(time.Minute)
		jb = f.claim("t-b")
		if _, err := s.Fail(ctx, spine.FailParams{Lease: lease(jb), Error: spine.JobError{Message: "boom again"}, Now: f.tick(time.Second)}); err != nil {
			t.Fatal(err)
		}
		f.expect("the last attempt fails", want{events.JobStarted, b}, want{events.JobFailed, b})

		if _, err := s.Cancel(ctx, spine.CancelParams{Workspace: eventsWS, JobID: c, By: "op", Reason: "no", Now: f.tick(time.Second)}); err != nil {
			t.Fatal(err)
		}
		f.expect("cancel a waiting job", want{events.JobCanceled, c})

		if err := s.Reopen(ctx, spine.ReopenParams{Workspace: eventsWS, JobID: b, By: "op", Now: f.tick(time.Second)}); err != nil {
			t.Fatal(err)
		}
		f.expect("reopen", want{events.JobQueued, b})

		jb = f.claim("t-b")
		if err := s.Release(ctx, spine.ReleaseParams{Lease: lease(jb), Now: f.tick(time.Second)}); err != nil {
			t.Fatal(err)
		}
		f.expect("release on shutdown", want{events.JobStarted, b}, want{events.JobQueued, b})

		jb = f.claim("t-b")
		f.expect("claim", want{events.JobStarted, b})
		if _, err := s.Cancel(ctx, spine.CancelParams{Workspace: eventsWS, JobID: b, By: "op", Reason: "stop", Now: f.tick(time.Second)}); err != nil {
			t.Fatal(err)
		}
		f.expect("cancel a running job: the mark alone writes none")
		if _, err := s.Complete(ctx, spine.CompleteParams{Lease: lease(jb), Now: f.tick(time.Second)}); err != nil {
			t.Fatal(err)
		}
		f.expect("the marked job's completion", want{events.JobCanceled, b})

		moved, err := s.Requeue(ctx, eventsWS, d, "op")
		if err != nil {
			t.Fatal(err)
		}
		// The canceled job shows the new one as superseded_by only after
		// the new one's insert, in the same transaction.
		f.stale = d
		f.expect("requeue", want{events.JobCanceled, d}, want{events.JobQueued, moved.ID})

		// A keyed job that finishes while its follow-up waits: its event
		// shows the follow-up as superseded_by.
		rekeyed := func(p *spine.EnqueueParams) { p.CoalesceKey = "k2" }
		k1 := f.enqueue(f.params("t-k", rekeyed))
		jk := f.claim("t-k")
		k2 := f.enqueue(f.params("t-k", rekeyed))
		if _, err := s.Complete(ctx, spine.CompleteParams{Lease: lease(jk), Now: f.tick(time.Second)}); err != nil {
			t.Fatal(err)
		}
		evs := f.expect("a keyed job finishes behind its follow-up", want{events.JobQueued, k1}, want{events.JobStarted, k1},
			want{events.JobQueued, k2}, want{events.JobSucceeded, k1})
		if got := normalize(t, evs[3].Data)["superseded_by"]; got != k2.String() {
			t.Fatalf("superseded_by of %s's completion is %v, want %s", k1, got, k2)
		}

		// The reaper: a restarted zombie retries, one past the limit fails,
		// a marked one is canceled.
		e := f.enqueue(f.params("t-e"))
		h := f.enqueue(f.params("t-h"))
		f.claim("t-e")
		jh := f.claim("t-h")
		if _, err := s.Cancel(ctx, spine.CancelParams{Workspace: eventsWS, JobID: jh.ID, By: "op", Now: f.now}); err != nil {
			t.Fatal(err)
		}
		reap := func() spine.ReapResult {
			r, err := s.Reap(ctx, spine.ReapParams{Now: f.tick(2 * time.Minute), ZombieTimeout: time.Minute, RestartLimit: 1})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		reap()
		f.expect("reap", want{events.JobQueued, e}, want{events.JobQueued, h}, want{events.JobStarted, e},
			want{events.JobStarted, h}, want{events.JobRetrying, e}, want{events.JobCanceled, h})
		f.claim("t-e")
		reap()
		f.expect("reap past the restart limit", want{events.JobStarted, e}, want{events.JobFailed, e})

		// Batch completion: one event per job, in job id order.
		g1 := f.enqueue(f.params("t-g"))
		g2 := f.enqueue(f.params("t-g"))
		jobs, err := s.Claim(ctx, spine.ClaimParams{Worker: "w1", Tags: []string{"t-g"}, Limit: 2, Now: f.tick(time.Second)})
		if err != nil || len(jobs) != 2 {
			t.Fatalf("claim 2: %v %d", err, len(jobs))
		}
		f.expect("claim two", want{events.JobQueued, g1}, want{events.JobQueued, g2},
			want{events.JobStarted, jobs[0].ID}, want{events.JobStarted, jobs[1].ID})
		if _, err := s.Cancel(ctx, spine.CancelParams{Workspace: eventsWS, JobID: g2, By: "op", Now: f.now}); err != nil {
			t.Fatal(err)
		}
		out, err := s.CompleteBatch(ctx, []spine.CompleteParams{
			{Lease: lease(jobs[1]), Result: json.RawMessage(`[1]`), Now: f.tick(time.Second)},
			{Lease: lease(jobs[0]), Result: json.RawMessage(`[0]`), Now: f.now},
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range out {
			if o.Err != nil {
				t.Fatal(o.Err)
			}
		}
		first, second := events.JobSucceeded, events.JobCanceled
		lo, hi := g1, g2
		if strings.Compare(g2.String(), g1.String()) < 0 {
			lo, hi, first, second = g2, g1, events.JobCanceled, events.JobSucceeded
		}
		f.expect("batch completion", want{first, lo}, want{second, hi})

		all, err := s.EventsAfter(ctx, "", 0, MaxEventsLimit)
		if err != nil {
			t.Fatal(err)
		}
		var sawOther bool
		for _, e := range all {
			sawOther = sawOther || e.Subject == other.String()
			if e.Workspace == silentEventsWS || e.Subject == silent.String() {
				t.Errorf("a workspace without a sink recorded %s %s", e.Type, e.Subject)
			}
		}
		if !sawOther {
			t.Errorf("a read of every workspace misses %s's job", otherEventsWS)
		}
	})
}

func lease(j spine.ClaimedJob) spine.Lease { return spine.Lease{JobID: j.ID, ClaimToken: j.ClaimToken} }

// failEvents is an executor whose event writes fail, inside
// transactions too.
type failEvents struct{ driver.Executor }

var errEventWrite = errors.New("event write failed")

func (f failEvents) Tx(ctx context.Context, fn func(driver.Executor) error) error {
	return f.Executor.Tx(ctx, func(ex driver.Executor) error { return fn(failEvents{ex}) })
}

func (failEvents) JobEvents(context.Context, driver.JobEvents) error { return errEventWrite }

func (failEvents) SourceEvent(context.Context, driver.SourceEvent) error { return errEventWrite }

// TestEventAndChangeAllOrNothing: a change whose event cannot be written
// does not happen, and a rolled-back change leaves no event.
func TestEventAndChangeAllOrNothing(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		f := newEventFlow(t, s)
		ctx := t.Context()
		id := f.enqueue(f.params("t"))
		f.expect("enqueue", want{events.JobQueued, id})

		faulty := &Store{drv: s.drv, ex: failEvents{s.ex}}
		if _, err := faulty.Cancel(ctx, spine.CancelParams{Workspace: eventsWS, JobID: id, By: "op"}); !errors.Is(err, errEventWrite) {
			t.Fatalf("cancel with a failing event write: %v", err)
		}
		if j, err := s.GetJob(ctx, eventsWS, id); err != nil || j.Status != spine.StatusQueued {
			t.Fatalf("the cancel stayed without its event: %v %v", j.Status, err)
		}

		// A caller's transaction that rolls back (a savepoint inside it
		// too) leaves neither the job nor its event.
		rollback := errors.New("roll back")
		err := s.ex.Tx(ctx, func(ex driver.Executor) error {
			if _, err := s.EnqueueTx(ctx, ex, f.params("t")); err != nil {
				return err
			}
			return ex.Tx(ctx, func(ex driver.Executor) error {
				if _, err := s.EnqueueTx(ctx, ex, f.params("t")); err != nil {
					return err
				}
				return rollback
			})
		})
		if !errors.Is(err, rollback) {
			t.Fatalf("transaction: %v", err)
		}
		// A batch refused as a whole (a repeated id) writes none either.
		p := f.params("t")
		p.ID = uuid.Must(uuid.NewV7())
		if _, err := s.EnqueueBatch(ctx, []spine.EnqueueParams{p, p}); err == nil {
			t.Fatal("a batch repeating an id was enqueued")
		}
		f.expect("rolled back: no event")
	})
}
