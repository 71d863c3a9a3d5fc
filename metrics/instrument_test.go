package metrics_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/windforce/windforce/metrics"
	"github.com/windforce/windforce/spine"
)

// TestInstrumentWorker: a real worker runs an instrumented handler; the
// claims, outcomes and run times it counts match what the jobs did.
func TestInstrumentWorker(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, s spine.Store) {
		for _, in := range []string{`"ok"`, `"fail"`, `"panic"`} {
			_, err := s.Enqueue(t.Context(), spine.EnqueueParams{Workspace: "a", TriggerKind: spine.TriggerAPI,
				CreatedBy: "test", Input: json.RawMessage(in), Pin: spine.Pin{GitSourceID: "src",
					CommitSHA: "0123456789abcdef0123456789abcdef01234567", AppKey: "hello", ActionKey: "greet",
					Entrypoint: "src/main.ts", Runtime: "bun", Timeout: time.Minute, Tag: "default",
					Retry: spine.RetryPolicy{MaxAttempts: 1, Backoff: time.Second, Factor: 2}}})
			if err != nil {
				t.Fatal(err)
			}
		}
		m := metrics.New(metrics.Options{Health: s})
		handler := func(_ context.Context, job *spine.ClaimedJob) (json.RawMessage, error) {
			switch string(job.Input) {
			case `"ok"`:
				return json.RawMessage(`{"greeting":"hi"}`), nil
			case `"panic"`:
				panic("boom")
			}
			return nil, errors.New("asked to fail")
		}
		w, err := spine.NewWorker(spine.WorkerConfig{Store: s, Handler: m.Instrument(handler),
			Concurrency: 3, PollInterval: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		waitDone(t, s, 2)

		got := serve(t, m)
		got.Want(t, 3, "windforce_jobs_claimed_total", "tag", "default")
		got.Want(t, 1, "windforce_jobs_completed_total", "status", "success", "tag", "default")
		got.Want(t, 2, "windforce_jobs_completed_total", "status", "failure", "tag", "default")
		got.Want(t, 3, "windforce_job_run_seconds", "tag", "default")
		got.Want(t, 2, "windforce_queue_failed_24h", "workspace", "a", "tag", "default")
	})
}

// waitDone polls queue health until no job waits or runs and failed
// jobs have ended in failure, or fails after a deadline.
func waitDone(t *testing.T, s spine.Store, failed int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		rows, err := s.Health(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var live, f int64
		for _, h := range rows {
			live += h.Waiting + h.Scheduled + h.Running
			f += h.Failed24h
		}
		if live == 0 && f == failed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs not done: %d live, %d failed (want 0 and %d)", live, f, failed)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not a wait for an event
	}
}

// TestInstrumentOutcomes: the status is decided as the worker decides
// what to write: the job context's cause first, then error or deadline,
// then the result's validity.
func TestInstrumentOutcomes(t *testing.T) {
	t.Parallel()
	ok := json.RawMessage(`{"greeting":"hi"}`)
	cases := []struct {
		name   string
		cause  error // cancels the job context with this cause; nil: not canceled
		result json.RawMessage
		err    error
		status string
	}{
		{"success", nil, ok, nil, metrics.StatusSuccess},
		{"error", nil, nil, errors.New("bad"), metrics.StatusFailure},
		{"invalid result", nil, json.RawMessage(`{not json`), nil, metrics.StatusFailure},
		{"timeout", context.DeadlineExceeded, ok, nil, metrics.StatusFailure},
		{"canceled", spine.ErrJobCanceled, nil, context.Canceled, metrics.StatusCanceled},
		{"canceled but returned", spine.ErrJobCanceled, ok, nil, metrics.StatusCanceled},
		{"lost", spine.ErrLostOwnership, nil, context.Canceled, metrics.StatusLost},
		{"shutdown", spine.ErrShutdown, nil, context.Canceled, metrics.StatusReleased},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := metrics.New(metrics.Options{})
			h := m.Instrument(func(context.Context, *spine.ClaimedJob) (json.RawMessage, error) { return c.result, c.err })
			ctx, cancel := context.WithCancelCause(t.Context())
			defer cancel(nil)
			if c.cause != nil {
				cancel(c.cause)
			}
			res, err := h(ctx, &spine.ClaimedJob{Pin: spine.Pin{Tag: "gpu"}})
			if string(res) != string(c.result) || !errors.Is(err, c.err) {
				t.Fatalf("middleware changed the outcome: %s, %v", res, err)
			}
			got := serve(t, m)
			got.Want(t, 1, "windforce_jobs_claimed_total", "tag", "gpu")
			got.Want(t, 1, "windforce_jobs_completed_total", "status", c.status, "tag", "gpu")
			got.Want(t, 1, "windforce_job_run_seconds", "tag", "gpu")
		})
	}
}

// TestInstrumentPanic: a panic counts as a failure and still reaches the
// worker, which records it.
func TestInstrumentPanic(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Options{})
	h := m.Instrument(func(context.Context, *spine.ClaimedJob) (json.RawMessage, error) { panic("boom") })
	func() {
		defer func() {
			if p := recover(); fmt.Sprint(p) != "boom" {
				t.Fatalf("recovered %v, want the handler's panic", p)
			}
		}()
		_, _ = h(t.Context(), &spine.ClaimedJob{Pin: spine.Pin{Tag: "default"}})
	}()
	serve(t, m).Want(t, 1, "windforce_jobs_completed_total", "status", "failure", "tag", "default")
}

// TestCounters: the server, sync and reaper hooks count, and a nil
// *Metrics is a no-op everywhere.
func TestCounters(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Options{})
	m.JobEnqueued(spine.TriggerWebhook, "a")
	m.JobEnqueued(spine.TriggerWebhook, "a")
	m.JobEnqueued(spine.TriggerAPI, "b")
	m.SyncDone(nil)
	m.SyncDone(errors.New("bad manifest"))
	m.SyncDone(errors.New("fetch failed"))
	m.Reaped(spine.ReapResult{Requeued: make([]uuid.UUID, 2), Failed: make([]uuid.UUID, 1)})
	got := serve(t, m)
	got.Want(t, 2, "windforce_jobs_enqueued_total", "trigger", "webhook", "workspace", "a")
	got.Want(t, 1, "windforce_jobs_enqueued_total", "trigger", "api", "workspace", "b")
	got.Want(t, 1, "windforce_sync_total", "result", "success")
	got.Want(t, 2, "windforce_sync_total", "result", "failure")
	got.Want(t, 2, "windforce_zombies_reaped_total", "outcome", "requeued")
	got.Want(t, 1, "windforce_zombies_reaped_total", "outcome", "failed")
	got.Want(t, 0, "windforce_zombies_reaped_total", "outcome", "canceled")
	if n := testutil.CollectAndCount(m.Registry(), "windforce_queue_waiting"); n != 0 {
		t.Fatalf("%d queue samples without a health source", n)
	}

	var none *metrics.Metrics
	none.JobEnqueued(spine.TriggerAPI, "a")
	none.SyncDone(nil)
	none.Reaped(spine.ReapResult{})
	h := none.Instrument(func(context.Context, *spine.ClaimedJob) (json.RawMessage, error) { return nil, nil })
	if _, err := h(t.Context(), &spine.ClaimedJob{}); err != nil {
		t.Fatal(err)
	}
}
