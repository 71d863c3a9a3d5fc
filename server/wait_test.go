package server_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/internal/apitest"
	"github.com/windforce/windforce/internal/teststore"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/server"
	"github.com/windforce/windforce/spine"
)

// noPoll makes the server's fallback polls longer than any test, so an
// answer can only come from the completion wake-up.
const noPoll = time.Hour

// watchedStore reports every GetJob answer on reads, so a test knows when
// a waiting handler has subscribed and read the job live.
type watchedStore struct {
	server.Store
	reads chan spine.Status
}

func (w *watchedStore) GetJob(ctx context.Context, ws string, id uuid.UUID) (spine.Job, error) {
	j, err := w.Store.GetJob(ctx, ws, id)
	if err == nil {
		select {
		case w.reads <- j.Status:
		default:
			panic("watchedStore: nobody reads the GetJob answers")
		}
	}
	return j, err
}

// nextRead waits for the next GetJob answer and requires want.
func (w *watchedStore) nextRead(t *testing.T, want spine.Status, what string) {
	t.Helper()
	select {
	case got := <-w.reads:
		if got != want {
			t.Fatalf("%s: GetJob read %s, want %s", what, got, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no GetJob", what)
	}
}

// forEachWatchedBackend runs fn on SQLite and on Postgres with an API
// whose fallback polls never fire, over a watchedStore.
func forEachWatchedBackend(t *testing.T, fn func(t *testing.T, e *env, w *watchedStore)) {
	opts := options
	opts.WaitPoll, opts.FollowPoll = noPoll, noPoll
	forEachStore(t, func(t *testing.T, s server.Store, c objectcache.Cache) {
		w := &watchedStore{Store: s, reads: make(chan spine.Status, 64)}
		a := apitest.New(t, w, c, opts)
		drain(w) // the setup's reads (sync)
		fn(t, wrap(t, a), w)
	})
}

// forEachStore runs fn in parallel subtests on a fresh SQLite store with
// a file object cache and on a fresh Postgres schema with its cache.
func forEachStore(t *testing.T, fn func(t *testing.T, s server.Store, c objectcache.Cache)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		c, err := objectcache.NewFileCache(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		fn(t, teststore.SQLite(t), c)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		s := teststore.Postgres(t, 6)
		fn(t, s, teststore.PostgresCache(t, s))
	})
}

func drain(w *watchedStore) {
	for {
		select {
		case <-w.reads:
		default:
			return
		}
	}
}

// claimByHand claims the one waiting job as a worker would.
func claimByHand(t *testing.T, e *env) spine.ClaimedJob {
	t.Helper()
	jobs, err := e.db.Claim(t.Context(), spine.ClaimParams{Worker: "w-1", Tags: []string{spine.DefaultTag}, Limit: 1})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %v %v", jobs, err)
	}
	return jobs[0]
}

// TestRunWaitWokenByCompletion: ?wait answers as soon as the job ends,
// woken by the completion (the server's poll never fires here): after a
// worker's Complete with the result, and after a cancel of the waiting job.
func TestRunWaitWokenByCompletion(t *testing.T) {
	t.Parallel()
	forEachWatchedBackend(t, func(t *testing.T, e *env, w *watchedStore) {
		// The handler subscribes before it enqueues, and reads the job
		// only once woken: the first read is the finished job.
		answer, c := runWaitClaimed(t, e)
		if _, err := e.db.Complete(t.Context(), spine.CompleteParams{Lease: spine.Lease{JobID: c.ID, ClaimToken: c.ClaimToken},
			Result: json.RawMessage(`{"greeting":"Hello, Ada!"}`)}); err != nil {
			t.Fatal(err)
		}
		w.nextRead(t, spine.StatusSuccess, "?wait's read after the completion")
		got := (<-answer).want(200).obj()
		if got["id"] != c.ID.String() || got["status"] != "success" || got["result"].(map[string]any)["greeting"] != "Hello, Ada!" {
			t.Fatalf("?wait answered %v", got)
		}

		go func() {
			answer <- e.call("POST", "/api/w/ws/jobs/run/hello/greet?wait=60s", adminToken, `{"name":"Bo"}`)
		}()
		id := awaitWaitingJob(t, e)
		e.call("POST", "/api/w/ws/jobs/"+id+"/cancel", adminToken, `{"reason":"not needed"}`).want(200)
		w.nextRead(t, spine.StatusCanceled, "second ?wait's read after the cancel")
		if got := (<-answer).want(200).obj(); got["id"] != id || got["status"] != "canceled" {
			t.Fatalf("?wait of a canceled job answered %v", got)
		}
	})
}

// TestRunWaitAnsweredByTheCompletion: a batch completion's wake-up
// carries the job's result, and ?wait answers with it without reading the
// job: one read fewer on its path (on Postgres, one round trip).
func TestRunWaitAnsweredByTheCompletion(t *testing.T) {
	t.Parallel()
	forEachWatchedBackend(t, func(t *testing.T, e *env, w *watchedStore) {
		answer, c := runWaitClaimed(t, e)
		outs, err := e.db.CompleteBatch(t.Context(), []spine.CompleteParams{{Lease: spine.Lease{JobID: c.ID, ClaimToken: c.ClaimToken},
			Result: json.RawMessage(`{"greeting": "Hello, Ada!", "n": [1, 2]}`)}})
		if err != nil || len(outs) != 1 || outs[0].Err != nil {
			t.Fatalf("CompleteBatch: %v %v", outs, err)
		}
		got := (<-answer).want(200)
		select {
		case st := <-w.reads:
			t.Fatalf("?wait read the job (%s) though its wake-up carried the outcome", st)
		default:
		}
		// The same answer as from the job read after it.
		var answered, read struct {
			ID, Status string
			Result     json.RawMessage
		}
		job := e.call("GET", "/api/w/ws/jobs/"+c.ID.String(), adminToken, "").want(200)
		drain(w)
		if err := json.Unmarshal(got.body, &answered); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(job.body, &read); err != nil {
			t.Fatal(err)
		}
		if answered.ID != c.ID.String() || answered.Status != "success" || string(answered.Result) != string(read.Result) {
			t.Fatalf("?wait answered %s; the job reads %s", got.body, job.body)
		}
	})
}

// runWaitClaimed runs hello/greet with ?wait in the background and claims
// its job as a worker would; the answer arrives on the channel returned.
func runWaitClaimed(t *testing.T, e *env) (chan *resp, spine.ClaimedJob) {
	t.Helper()
	answer := make(chan *resp, 1)
	go func() {
		answer <- e.call("POST", "/api/w/ws/jobs/run/hello/greet?wait=60s", adminToken, `{"name":"Ada"}`)
	}()
	return answer, claimWhenQueued(t, e)
}

// claimWhenQueued claims the one job a ?wait enqueues, once it is there.
func claimWhenQueued(t *testing.T, e *env) spine.ClaimedJob {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		jobs, err := e.db.Claim(t.Context(), spine.ClaimParams{Worker: "w-1", Tags: []string{spine.DefaultTag}, Limit: 1})
		if err != nil || len(jobs) > 1 {
			t.Fatalf("claim: %v %v", jobs, err)
		}
		if len(jobs) == 1 {
			return jobs[0]
		}
		if time.Now().After(deadline) {
			t.Fatal("no job to claim after 30s")
		}
		time.Sleep(5 * time.Millisecond) // polling for the request's enqueue, with a deadline
	}
}

// awaitWaitingJob is waitingJob once the one queued job is there.
func awaitWaitingJob(t *testing.T, e *env) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		list := e.call("GET", "/api/w/ws/jobs?status=queued", adminToken, "").want(200).obj()
		if jobs, _ := list["jobs"].([]any); len(jobs) > 0 {
			return waitingJob(t, e)
		}
		if time.Now().After(deadline) {
			t.Fatal("no queued job after 30s")
		}
		time.Sleep(5 * time.Millisecond) // polling for the request's enqueue, with a deadline
	}
}

// waitingJob is the id of the one queued job, read from the list.
func waitingJob(t *testing.T, e *env) string {
	t.Helper()
	list := e.call("GET", "/api/w/ws/jobs?status=queued", adminToken, "").want(200).obj()
	jobs, _ := list["jobs"].([]any)
	if len(jobs) != 1 {
		t.Fatalf("queued jobs %v, want one", list)
	}
	return jobs[0].(map[string]any)["id"].(string)
}

// TestFollowLogsEndWokenByCompletion: a log stream ends with the job,
// woken by its completion (its log poll never fires here), and carries
// the output written with the completion.
func TestFollowLogsEndWokenByCompletion(t *testing.T) {
	t.Parallel()
	forEachWatchedBackend(t, func(t *testing.T, e *env, w *watchedStore) {
		id := e.call("POST", "/api/w/ws/jobs/run/hello/greet", adminToken, `{"name":"Ada"}`).want(201).obj()["id"].(string)
		c := claimByHand(t, e)
		s := e.follow(t, id, "")
		w.nextRead(t, spine.StatusRunning, "the stream's lookup")
		w.nextRead(t, spine.StatusRunning, "the stream's first read, subscribed")
		l := spine.Lease{JobID: c.ID, ClaimToken: c.ClaimToken}
		if err := e.db.AppendLog(t.Context(), spine.AppendLogParams{Lease: l, Data: "last words\n"}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.Complete(t.Context(), spine.CompleteParams{Lease: l, Result: json.RawMessage(`{"greeting":"hi"}`)}); err != nil {
			t.Fatal(err)
		}
		w.nextRead(t, spine.StatusSuccess, "the stream's read after the completion")
		rest, status := s.untilEnd(t)
		if status != "success" || joinLogs(rest) != "last words\n" {
			t.Fatalf("stream ended with %q after %+v", status, rest)
		}
	})
}

// TestRunWaitCoalescedFollowsTheHolder: a ?wait folded into the waiting
// job holding its coalesce key waits for that job (its id, not the one
// the request was given), subscribing and reading it first.
func TestRunWaitCoalescedFollowsTheHolder(t *testing.T) {
	t.Parallel()
	forEachWatchedBackend(t, func(t *testing.T, e *env, w *watchedStore) {
		holder := e.call("POST", "/api/w/ws/jobs/run/hello/greet?coalesce_key=k", adminToken, `{"name":"Ada"}`).want(201).obj()["id"].(string)
		answer := make(chan *resp, 1)
		go func() {
			answer <- e.call("POST", "/api/w/ws/jobs/run/hello/greet?coalesce_key=k&wait=60s", adminToken, `{"name":"Bo"}`)
		}()
		w.nextRead(t, spine.StatusQueued, "the folded ?wait's first read")
		c := claimByHand(t, e)
		if c.ID.String() != holder {
			t.Fatalf("claimed %s, want the holder %s", c.ID, holder)
		}
		if _, err := e.db.Complete(t.Context(), spine.CompleteParams{Lease: spine.Lease{JobID: c.ID, ClaimToken: c.ClaimToken},
			Result: json.RawMessage(`{"greeting":"Hello, Bo!"}`)}); err != nil {
			t.Fatal(err)
		}
		w.nextRead(t, spine.StatusSuccess, "the folded ?wait's read after the completion")
		if got := (<-answer).want(200).obj(); got["id"] != holder || got["status"] != "success" {
			t.Fatalf("folded ?wait answered %v, want the holder's outcome", got)
		}
	})
}
