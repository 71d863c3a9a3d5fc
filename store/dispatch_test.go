package store

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/postgres"
)

// Dispatch at enqueue (spine/dispatch.go): Postgres only; SQLite keeps no
// offers. The reads it adds (ReadDispatched, Owned) are checked on both.

const dispatchWorker = "worker-d"

// offerFor makes worker's claim on tags find nothing and leave an offer
// of capacity slots for ttl, as of now (zero: the database's clock).
func offerFor(t *testing.T, s *Store, worker string, tags []string, capacity int, ttl time.Duration, now time.Time) {
	t.Helper()
	jobs, err := s.Claim(t.Context(), spine.ClaimParams{Worker: worker, Tags: tags, Limit: capacity, Now: now,
		Offer: ttl, Capacity: capacity})
	if err != nil || len(jobs) != 0 {
		t.Fatalf("offering claim: %d jobs, %v; want none", len(jobs), err)
	}
}

// nextDispatch waits for one dispatch in the inbox.
func nextDispatch(t *testing.T, in *spine.Inbox) spine.Dispatch {
	t.Helper()
	select {
	case <-in.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("no dispatch within 10s")
	}
	ls, missed := in.Take()
	if len(ls) != 1 || missed {
		t.Fatalf("inbox held %d dispatches (missed %v), want 1", len(ls), missed)
	}
	return ls[0]
}

// requireWaiting fails unless job id waits in the queue (was not dispatched).
func requireWaiting(t *testing.T, s *Store, id uuid.UUID, what string) {
	t.Helper()
	j, err := s.GetJob(t.Context(), "ws", id)
	if err != nil {
		t.Fatalf("%s: get job: %v", what, err)
	}
	if j.Status != spine.StatusQueued || j.Worker != "" {
		t.Fatalf("%s: status %s, worker %q; want queued, no worker", what, j.Status, j.Worker)
	}
}

// An enqueue while a worker's offer stands inserts the job running and
// owned by that worker, with its first ping, in the enqueue's own
// statement; the worker hears of it and reads it as a claim would have
// returned it. No other worker can claim it; its lease completes it.
func TestDispatchAtEnqueue(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	ctx := t.Context()
	in, stop := s.SubscribeDispatch(dispatchWorker)
	defer stop()
	offerFor(t, s, dispatchWorker, []string{"default"}, 2, time.Minute, time.Time{})
	res := mustEnqueue(t, s, pinJob("default"))
	l := nextDispatch(t, in).Lease
	if l.JobID != res.ID {
		t.Fatalf("dispatched %s, want %s", l.JobID, res.ID)
	}
	job, err := s.ReadDispatched(ctx, dispatchWorker, l)
	if err != nil {
		t.Fatalf("read dispatched: %v", err)
	}
	if job.ClaimToken != l.ClaimToken || job.Attempt != 1 || job.Pin.AppKey != "app" || string(job.Input) != `{"n":1}` {
		t.Fatalf("dispatched job reads %+v", job)
	}
	got := mustGetJob(t, s, res)
	if got.Status != spine.StatusRunning || got.Worker != dispatchWorker || got.StartedAt == nil {
		t.Fatalf("dispatched job is %s, worker %q, started %v; want running on %s", got.Status, got.Worker, got.StartedAt, dispatchWorker)
	}
	if n := sqlInt(t, s, "SELECT count(*) FROM job_runtime WHERE ping IS NOT NULL AND job_id = '"+res.ID.String()+"'"); n != 1 {
		t.Fatalf("%d first pings, want 1", n)
	}
	if jobs, err := s.Claim(ctx, spine.ClaimParams{Worker: "other", Tags: []string{"default"}, Limit: 5}); err != nil || len(jobs) != 0 {
		t.Fatalf("another worker claimed %d jobs (%v) of a dispatched queue", len(jobs), err)
	}
	if _, err := s.ReadDispatched(ctx, "other", l); !errors.Is(err, spine.ErrNotOwner) {
		t.Fatalf("read by another worker: %v, want ErrNotOwner", err)
	}
	if _, err := s.Complete(ctx, spine.CompleteParams{Lease: l, Result: []byte(`{"ok":true}`)}); err != nil {
		t.Fatalf("complete dispatched job: %v", err)
	}
	if _, err := s.ReadDispatched(ctx, dispatchWorker, l); !errors.Is(err, spine.ErrNotOwner) {
		t.Fatalf("read after completion: %v, want ErrNotOwner", err)
	}
}

// A dispatch never jumps the queue nor fills a worker past its capacity:
// while a due job of the tag waits with the same or a higher priority,
// or the worker's running jobs reach its capacity, the job waits for a
// claim, and claims take the waiting jobs in their order.
func TestDispatchKeepsOrderAndCapacity(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	ctx := t.Context()
	in, stop := s.SubscribeDispatch(dispatchWorker)
	defer stop()
	offerFor(t, s, dispatchWorker, []string{"t"}, 1, time.Minute, time.Time{})
	a := mustEnqueue(t, s, pinJob("t"))
	la := nextDispatch(t, in).Lease
	if la.JobID != a.ID {
		t.Fatalf("dispatched %s, want the first job", la.JobID)
	}
	b := mustEnqueue(t, s, pinJob("t"))
	requireWaiting(t, s, b.ID, "a job beyond the worker's capacity")
	if _, err := s.Complete(ctx, spine.CompleteParams{Lease: la, Result: []byte(`1`)}); err != nil {
		t.Fatal(err)
	}
	c := mustEnqueue(t, s, pinJob("t"))
	requireWaiting(t, s, c.ID, "a job behind a waiting one")
	urgent := pinJob("t")
	urgent.Priority = 5
	d := mustEnqueue(t, s, urgent)
	if l := nextDispatch(t, in).Lease; l.JobID != d.ID {
		t.Fatalf("dispatched %s, want the job that outranks every waiting one", l.JobID)
	}
	jobs, err := s.Claim(ctx, spine.ClaimParams{Worker: "other", Tags: []string{"t"}, Limit: 5})
	if err != nil || len(jobs) != 2 || jobs[0].ID != b.ID || jobs[1].ID != c.ID {
		t.Fatalf("claim after the dispatches: %d jobs (%v), want the two waiting ones in order", len(jobs), err)
	}
}

// Only a due job without a coalesce key, on one of the offer's tags,
// while the offer lives and has not been withdrawn, is dispatched.
// Owned returns what the worker owns, dispatched jobs included.
func TestDispatchOnlyWithinTheOffer(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	in, stop := s.SubscribeDispatch(dispatchWorker)
	defer stop()
	tags := []string{"t", "u"}
	offerFor(t, s, dispatchWorker, tags, 4, time.Minute, time.Time{})

	later := pinJob("t")
	later.ScheduledFor = time.Now().Add(time.Hour)
	requireWaiting(t, s, mustEnqueue(t, s, later).ID, "a job scheduled later")
	requireWaiting(t, s, mustEnqueue(t, s, pinJob("elsewhere")).ID, "a job of another tag")
	res := mustEnqueue(t, s, pinJob("t"))
	l := nextDispatch(t, in).Lease
	keyed := pinJob("t")
	keyed.CoalesceKey = "k"
	requireWaiting(t, s, mustEnqueue(t, s, keyed).ID, "a job with a coalesce key")

	if err := s.Withdraw(t.Context(), dispatchWorker); err != nil {
		t.Fatalf("withdraw: %v", err)
	}
	owned, err := s.Owned(t.Context(), dispatchWorker)
	if err != nil {
		t.Fatalf("owned: %v", err)
	}
	if len(owned) != 1 || owned[0] != l || l.JobID != res.ID {
		t.Fatalf("owned returned %v, want the dispatched lease %v", owned, l)
	}
	requireWaiting(t, s, mustEnqueue(t, s, pinJob("u")).ID, "a job after the offer was withdrawn")
	if _, err := s.Claim(t.Context(), spine.ClaimParams{Worker: "other", Tags: []string{"u"}, Limit: 1}); err != nil {
		t.Fatal(err)
	}

	// An offer made an hour ago for ten seconds has lapsed.
	offerFor(t, s, dispatchWorker, tags, 4, 10*time.Second, time.Now().Add(-time.Hour))
	requireWaiting(t, s, mustEnqueue(t, s, pinJob("u")).ID, "a job after the offer lapsed")
}

// ReadDispatched reads an owned lease as the claim returned it, and
// Owned lists a worker's running leases, on both databases (SQLite
// dispatches nothing, but a claimed job reads the same).
func TestReadOwnedLeases(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		mustEnqueue(t, s, pinJob("default"))
		claimed := queueClaimOne(t, s, "default", time.Time{})
		l := leaseOf(claimed)
		job, err := s.ReadDispatched(ctx, "w1", l)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if job.ID != claimed.ID || job.ClaimToken != claimed.ClaimToken || string(job.Input) != string(claimed.Input) ||
			job.Pin.AppKey != claimed.Pin.AppKey || job.Pin.Timeout != claimed.Pin.Timeout || !job.StartedAt.Equal(claimed.StartedAt) {
			t.Fatalf("read %+v, claimed %+v", job, claimed)
		}
		if _, err := s.ReadDispatched(ctx, "w1", spine.Lease{JobID: l.JobID, ClaimToken: uuid.New()}); !errors.Is(err, spine.ErrNotOwner) {
			t.Fatalf("read with another token: %v, want ErrNotOwner", err)
		}
		if err := s.Withdraw(ctx, "w1"); err != nil {
			t.Fatalf("withdraw: %v", err)
		}
		if owned, err := s.Owned(ctx, "w1"); err != nil || len(owned) != 1 || owned[0] != l {
			t.Fatalf("owned: %v, %v; want [%v]", owned, err, l)
		}
		if _, err := s.Complete(ctx, spine.CompleteParams{Lease: l, Result: []byte(`1`)}); err != nil {
			t.Fatal(err)
		}
		if owned, err := s.Owned(ctx, "w1"); err != nil || len(owned) != 0 {
			t.Fatalf("owned after completion: %v, %v; want none", owned, err)
		}
	})
}

// A worker on Postgres runs a job dispatched to it: the enqueue wrote
// its start (started_at is the enqueue's own time), and the worker ran
// and completed it without a claim.
func TestWorkerRunsDispatchedJob(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	ran := make(chan uuid.UUID, 1)
	w := startWorker(t, s, 2, func(_ context.Context, j *spine.ClaimedJob) (json.RawMessage, error) {
		ran <- j.ID
		return json.RawMessage(`{"ok":true}`), nil
	})
	defer w.Stop()
	waitOffer(t, s) // the worker's first claim leaves its offer
	res := mustEnqueue(t, s, pinJob("default"))
	if id := nextRun(t, ran); id != res.ID {
		t.Fatalf("ran %s, want %s", id, res.ID)
	}
	waitFor(t, "the job's completion", func() bool { return mustGetJob(t, s, res).Status == spine.StatusSuccess })
	got := mustGetJob(t, s, res)
	if got.StartedAt == nil || !got.StartedAt.Equal(got.CreatedAt) || got.Worker != dispatchWorker {
		t.Fatalf("job started %v (created %v) on %q: not dispatched at enqueue to %s", got.StartedAt, got.CreatedAt, got.Worker, dispatchWorker)
	}
}

// A job dispatched to a worker that never heard of it (its notification
// was lost: here the worker had not subscribed yet) goes back to the
// queue when that worker stops, without an attempt or a restart charged.
func TestWorkerStopReleasesUnheardDispatch(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	// The listener runs (an offer needs it) but nobody here is dispatchWorker.
	other, stop := s.SubscribeDispatch("someone-else")
	defer stop()
	offerFor(t, s, dispatchWorker, []string{"default"}, 2, time.Minute, time.Time{})
	res := mustEnqueue(t, s, pinJob("default"))
	if got := mustGetJob(t, s, res); got.Worker != dispatchWorker {
		t.Fatalf("job on %q, want dispatched to %s", got.Worker, dispatchWorker)
	}
	heardBy(t, s, other)
	w := startWorker(t, s, 2, func(context.Context, *spine.ClaimedJob) (json.RawMessage, error) {
		t.Error("the unheard job ran")
		return nil, nil
	})
	waitOffer(t, s)
	w.Stop()
	got := mustGetJob(t, s, res)
	if got.Status != spine.StatusQueued || got.Attempt != 1 || got.Restarts != 0 {
		t.Fatalf("after the stop: %s, attempt %d, restarts %d; want queued, 1, 0", got.Status, got.Attempt, got.Restarts)
	}
	if n := sqlInt(t, s, "SELECT count(*) FROM worker_offer"); n != 0 {
		t.Fatalf("%d offers left after the stop, want none", n)
	}
}

// waitFor polls cond until it holds, for 10 seconds at most.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 10s", what)
		}
		time.Sleep(10 * time.Millisecond) // polling with a deadline
	}
}

// cutListener terminates the backend of s's listener, as a failover or an
// idle-killer would; it reconnects by itself.
func cutListener(t *testing.T, s *Store) {
	t.Helper()
	// The call is in the select list: a WHERE may call
	// pg_terminate_backend before it tests the name, on this very backend.
	if n := sqlInt(t, s, `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = 'windforce listener ' || current_schema()`); n != 1 {
		t.Fatalf("terminated %d listeners, want 1", n)
	}
}

// A job dispatched while the worker's listener was away (here: before the
// worker subscribed, so its notification reached nobody) is adopted when
// the listener is back: it runs on that worker at once, its first
// attempt, no restart charged, instead of waiting for the reaper.
func TestWorkerAdoptsDispatchMissedByItsListener(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	other, stop := s.SubscribeDispatch("someone-else") // the listener runs
	defer stop()
	offerFor(t, s, dispatchWorker, []string{"default"}, 2, time.Minute, time.Time{})
	res := mustEnqueue(t, s, pinJob("default"))
	heardBy(t, s, other)
	ran := make(chan uuid.UUID, 2)
	w := startWorker(t, s, 2, func(_ context.Context, j *spine.ClaimedJob) (json.RawMessage, error) {
		ran <- j.ID
		return json.RawMessage(`1`), nil
	})
	defer w.Stop()
	waitOffer(t, s)
	select {
	case <-ran:
		t.Fatal("the unheard job ran before the listener reconnected")
	default:
	}
	cutListener(t, s)
	if id := nextRun(t, ran); id != res.ID {
		t.Fatalf("ran %s, want %s", id, res.ID)
	}
	waitFor(t, "the adopted job's success", func() bool { return mustGetJob(t, s, res).Status == spine.StatusSuccess })
	if got := mustGetJob(t, s, res); got.Attempt != 1 || got.Restarts != 0 || got.Worker != dispatchWorker {
		t.Fatalf("adopted job: attempt %d, restarts %d, worker %q; want 1, 0, %s", got.Attempt, got.Restarts, got.Worker, dispatchWorker)
	}
}

// A job adopted after a reconnect whose notification arrives after all
// (it was only late), carrying the job, runs once, even when the adopted
// run has finished and nothing in the database would stop the second.
func TestWorkerRunsAnAdoptedJobOnce(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	other, stop := s.SubscribeDispatch("someone-else")
	defer stop()
	notified := listenDispatches(t, s)
	offerFor(t, s, dispatchWorker, []string{"default"}, 3, time.Minute, time.Time{})
	first := mustEnqueue(t, s, pinJob("default"))
	payload := notified()
	if !strings.Contains(payload, "\n") {
		t.Fatalf("the dispatch notification carries no job: %q", payload)
	}
	heardBy(t, s, other)
	ran := make(chan uuid.UUID, 4)
	w := startWorker(t, s, 3, func(_ context.Context, j *spine.ClaimedJob) (json.RawMessage, error) {
		ran <- j.ID
		return json.RawMessage(`1`), nil
	})
	defer w.Stop()
	waitOffer(t, s)
	cutListener(t, s)
	if id := nextRun(t, ran); id != first.ID {
		t.Fatalf("ran %s, want the adopted %s", id, first.ID)
	}
	waitFor(t, "the adopted job's success", func() bool { return mustGetJob(t, s, first).Status == spine.StatusSuccess })
	// The late notification of the adopted job, then a second dispatch:
	// notifications arrive in commit order, so when the second job runs
	// the late one has been handled.
	sqlInt(t, s, "SELECT count(*) FILTER (WHERE pg_notify('windforce_dispatch_' || current_schema(), $$"+payload+"$$)::text = '')")
	second := mustEnqueue(t, s, pinJob("default"))
	if id := nextRun(t, ran); id != second.ID {
		t.Fatalf("ran %s, want the second job %s (the first ran twice)", id, second.ID)
	}
	waitFor(t, "the second job's success", func() bool { return mustGetJob(t, s, second).Status == spine.StatusSuccess })
	select {
	case id := <-ran:
		t.Fatalf("%s ran again", id)
	default:
	}
}

// listenDispatches listens on s's dispatch channel on a connection of its
// own and returns a function that waits for the next payload.
func listenDispatches(t *testing.T, s *Store) func() string {
	t.Helper()
	pooled, err := s.Driver().(*postgres.Driver).Pool().Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	conn := pooled.Hijack() // a listening connection must not go back to the pool
	t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(t.Context(), `DO $$ BEGIN EXECUTE format('LISTEN %I', 'windforce_dispatch_' || current_schema()); END $$`); err != nil {
		t.Fatal(err)
	}
	return func() string {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			t.Fatalf("no dispatch notification: %v", err)
		}
		return n.Payload
	}
}

// heardBy waits until s's listener has handled every dispatch notified
// so far: it sends one to the worker of inbox other and waits for it
// there (a listener hears notifications in commit order). A dispatch to
// a worker with no inbox yet is then lost, as when its listener was away.
func heardBy(t *testing.T, s *Store, other *spine.Inbox) {
	t.Helper()
	sentinel := spine.Lease{JobID: uuid.New(), ClaimToken: uuid.New()}
	sqlInt(t, s, `SELECT count(*) FILTER (WHERE pg_notify('windforce_dispatch_' || current_schema(),
		'`+sentinel.JobID.String()+` `+sentinel.ClaimToken.String()+` someone-else')::text = '')`)
	if l := nextDispatch(t, other).Lease; l != sentinel {
		t.Fatalf("someone-else was dispatched %v, want the sentinel %v", l, sentinel)
	}
}

// startWorker starts dispatchWorker on s with concurrency slots and
// handler h.
func startWorker(t *testing.T, s *Store, concurrency int, h spine.Handler) *spine.Worker {
	t.Helper()
	w, err := spine.NewWorker(spine.WorkerConfig{Store: s, Name: dispatchWorker, Concurrency: concurrency, Handler: h})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	return w
}

// waitOffer waits until dispatchWorker's claims have left a live offer:
// its claim loop runs and its listener hears dispatches.
func waitOffer(t *testing.T, s *Store) {
	t.Helper()
	waitFor(t, "the worker's offer", func() bool {
		return sqlInt(t, s, "SELECT count(*) FROM worker_offer WHERE worker = '"+dispatchWorker+"' AND expires_at > now() + interval '1 second'") == 1
	})
}

// nextRun waits for the handler's next job.
func nextRun(t *testing.T, ran <-chan uuid.UUID) uuid.UUID {
	t.Helper()
	select {
	case id := <-ran:
		return id
	case <-time.After(10 * time.Second):
		t.Fatal("no job ran within 10s")
		return uuid.Nil
	}
}

// The notification of a dispatch carries the job, built from the same
// columns as a read: the worker gets exactly what ReadDispatched returns,
// whichever process enqueued (here another store on the same schema).
func TestDispatchNotificationCarriesTheJob(t *testing.T) {
	t.Parallel()
	url, schema := testdb.PostgresSchema(t)
	s := openPostgresAt(t, url, schema)
	in, stop := s.SubscribeDispatch(dispatchWorker)
	defer stop()
	offerFor(t, s, dispatchWorker, []string{"default"}, 2, time.Minute, time.Time{})
	p := pinJob("default")
	p.Input = json.RawMessage(`{"zeta": 1, "alpha": [1, 2], "mid": {"b": true, "a": null}, "s": "\u00e9\n"}`)
	p.Pin.InputSchema = json.RawMessage(`{"type": "object", "properties": {"zeta": {"type": "number"}}}`)
	p.Pin.Timeout = 1500*time.Millisecond + 300*time.Microsecond
	p.Pin.Retry = spine.RetryPolicy{MaxAttempts: 3, Backoff: 0, Factor: 1.5}
	p.Pin.Limits = spine.Limits{Memory: 64 << 20, CPU: 0.5}
	p.Pin.Env = []spine.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "two"}}
	p.Pin.Warm = &spine.Warm{MaxJobs: 10, Idle: time.Minute}
	p.Pin.Entrypoint, p.Pin.Runtime, p.Pin.CommitSHA = "main.ts", "bun", "abc"
	p.TriggerRef, p.CreatedBy, p.Priority = "ref", "me", 3
	res := mustEnqueue(t, openPostgresAt(t, url, schema), p)

	d := nextDispatch(t, in)
	if d.Job == nil || d.Lease.JobID != res.ID {
		t.Fatalf("dispatch %+v: want job %s with its lease", d, res.ID)
	}
	read, err := s.ReadDispatched(t.Context(), dispatchWorker, d.Lease)
	if err != nil {
		t.Fatalf("read dispatched: %v", err)
	}
	if !reflect.DeepEqual(*d.Job, read) {
		t.Fatalf("notified\n%+v\nread\n%+v", *d.Job, read)
	}
}

// A job too big for a notification's 8,000 bytes comes as its lease
// alone, and the worker reads it.
func TestDispatchTooBigForANotificationIsRead(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	in, stop := s.SubscribeDispatch(dispatchWorker)
	defer stop()
	offerFor(t, s, dispatchWorker, []string{"default"}, 2, time.Minute, time.Time{})
	p := pinJob("default")
	p.Input = json.RawMessage(`{"pad":"` + strings.Repeat("x", 8000) + `"}`)
	res := mustEnqueue(t, s, p)
	d := nextDispatch(t, in)
	if d.Job != nil || d.Lease.JobID != res.ID {
		t.Fatalf("dispatch of a big job carried the job (%v) or another lease (%v)", d.Job != nil, d.Lease)
	}
	if job, err := s.ReadDispatched(t.Context(), dispatchWorker, d.Lease); err != nil || len(job.Input) < 8000 {
		t.Fatalf("read the big job: %d bytes of input, %v", len(job.Input), err)
	}
}
