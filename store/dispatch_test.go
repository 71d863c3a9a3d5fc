package store

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// Dispatch at enqueue (spine/dispatch.go): Postgres only; SQLite keeps no
// offers. The reads it adds (ReadDispatched, Withdraw) are checked on
// both.

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

// nextDispatch waits for one lease in the inbox.
func nextDispatch(t *testing.T, in *spine.Inbox) spine.Lease {
	t.Helper()
	select {
	case <-in.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("no dispatch within 10s")
	}
	ls := in.Take()
	if len(ls) != 1 {
		t.Fatalf("inbox held %d leases, want 1", len(ls))
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
	l := nextDispatch(t, in)
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
	la := nextDispatch(t, in)
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
	if l := nextDispatch(t, in); l.JobID != d.ID {
		t.Fatalf("dispatched %s, want the job that outranks every waiting one", l.JobID)
	}
	jobs, err := s.Claim(ctx, spine.ClaimParams{Worker: "other", Tags: []string{"t"}, Limit: 5})
	if err != nil || len(jobs) != 2 || jobs[0].ID != b.ID || jobs[1].ID != c.ID {
		t.Fatalf("claim after the dispatches: %d jobs (%v), want the two waiting ones in order", len(jobs), err)
	}
}

// Only a due job without a coalesce key, on one of the offer's tags,
// while the offer lives and has not been withdrawn, is dispatched.
// Withdraw returns what the worker owns, dispatched jobs included.
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
	l := nextDispatch(t, in)
	keyed := pinJob("t")
	keyed.CoalesceKey = "k"
	requireWaiting(t, s, mustEnqueue(t, s, keyed).ID, "a job with a coalesce key")

	owned, err := s.Withdraw(t.Context(), dispatchWorker)
	if err != nil {
		t.Fatalf("withdraw: %v", err)
	}
	if len(owned) != 1 || owned[0] != l || l.JobID != res.ID {
		t.Fatalf("withdraw returned %v, want the dispatched lease %v", owned, l)
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
// Withdraw lists a worker's running leases, on both databases (SQLite
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
		if owned, err := s.Withdraw(ctx, "w1"); err != nil || len(owned) != 1 || owned[0] != l {
			t.Fatalf("withdraw: %v, %v; want [%v]", owned, err, l)
		}
		if _, err := s.Complete(ctx, spine.CompleteParams{Lease: l, Result: []byte(`1`)}); err != nil {
			t.Fatal(err)
		}
		if owned, err := s.Withdraw(ctx, "w1"); err != nil || len(owned) != 0 {
			t.Fatalf("withdraw after completion: %v, %v; want none", owned, err)
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
	w, err := spine.NewWorker(spine.WorkerConfig{Store: s, Name: dispatchWorker, Concurrency: 2,
		Handler: func(_ context.Context, j *spine.ClaimedJob) (json.RawMessage, error) {
			ran <- j.ID
			return json.RawMessage(`{"ok":true}`), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// The worker's first claim leaves its offer.
	waitFor(t, "the worker's offer", func() bool {
		return sqlInt(t, s, "SELECT count(*) FROM worker_offer WHERE worker = '"+dispatchWorker+"'") == 1
	})
	done, stop := s.SubscribeCompletion(uuid.Nil)
	defer stop()
	res := mustEnqueue(t, s, pinJob("default"))
	select {
	case id := <-ran:
		if id != res.ID {
			t.Fatalf("ran %s, want %s", id, res.ID)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the dispatched job did not run within 10s")
	}
	waitFor(t, "the job's completion", func() bool {
		select {
		case <-done:
		default:
		}
		return mustGetJob(t, s, res).Status == spine.StatusSuccess
	})
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
	_, stop := s.SubscribeDispatch("someone-else")
	defer stop()
	offerFor(t, s, dispatchWorker, []string{"default"}, 2, time.Minute, time.Time{})
	res := mustEnqueue(t, s, pinJob("default"))
	if got := mustGetJob(t, s, res); got.Worker != dispatchWorker {
		t.Fatalf("job on %q, want dispatched to %s", got.Worker, dispatchWorker)
	}
	w, err := spine.NewWorker(spine.WorkerConfig{Store: s, Name: dispatchWorker, Concurrency: 2,
		Handler: func(context.Context, *spine.ClaimedJob) (json.RawMessage, error) {
			t.Error("the unheard job ran")
			return nil, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the worker's offer", func() bool {
		return sqlInt(t, s, "SELECT count(*) FROM worker_offer WHERE worker = '"+dispatchWorker+"' AND expires_at > now() + interval '1 second'") == 1
	})
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
