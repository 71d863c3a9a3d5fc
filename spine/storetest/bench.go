package storetest

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
)

// BenchCompletionWake measures what a ?wait costs after the job is done:
// per iteration one job is enqueued and claimed, a waiter subscribes to
// its completion and waits as the server's ?wait does (woken, then GetJob),
// and the job is completed. It reports, over all iterations, the p50 and
// p99 from Complete returning (its commit acknowledged) to the waiter
// woken (woken-p50-µs, woken-p99-µs) and to the waiter holding the
// finished job, ready to answer (answer-p50-µs, answer-p99-µs); a waiter
// woken before Complete returned counts as 0. complete-p50-µs is the
// Complete call itself, for scale. s must be a fresh, migrated store.
func BenchCompletionWake(b *testing.B, s spine.Store) {
	ctx := b.Context()
	p := spine.EnqueueParams{
		Workspace: testWorkspace, TriggerKind: spine.TriggerAPI, CreatedBy: "bench",
		Input: json.RawMessage(`{}`), Pin: fullPin(),
	}
	var woken, answered, completing []time.Duration
	for b.Loop() {
		b.StopTimer()
		res, err := s.Enqueue(ctx, p)
		if err != nil {
			b.Fatalf("Enqueue: %v", err)
		}
		jobs, err := s.Claim(ctx, spine.ClaimParams{Worker: defaultWorker, Tags: []string{p.Pin.Tag}, Limit: 1})
		if err != nil || len(jobs) != 1 {
			b.Fatalf("Claim: %v (%d jobs)", err, len(jobs))
		}
		ch, stop := s.SubscribeCompletion(res.ID)
		type seen struct{ woken, answered time.Time }
		out := make(chan seen, 1)
		go func() {
			var w seen
			for {
				<-ch
				w.woken = time.Now()
				j, err := s.GetJob(ctx, testWorkspace, res.ID)
				if err == nil && j.Status.Terminal() {
					w.answered = time.Now()
					out <- w
					return
				}
			}
		}()
		b.StartTimer()
		start := time.Now()
		if _, err := s.Complete(ctx, spine.CompleteParams{Lease: lease(jobs[0]), Result: json.RawMessage(`{}`)}); err != nil {
			b.Fatalf("Complete: %v", err)
		}
		committed := time.Now()
		w := <-out
		b.StopTimer()
		stop()
		completing = append(completing, committed.Sub(start))
		woken = append(woken, max(0, w.woken.Sub(committed)))
		answered = append(answered, max(0, w.answered.Sub(committed)))
		b.StartTimer()
	}
	b.ReportMetric(quantileMicros(completing, 0.5), "complete-p50-µs")
	b.ReportMetric(quantileMicros(woken, 0.5), "woken-p50-µs")
	b.ReportMetric(quantileMicros(woken, 0.99), "woken-p99-µs")
	b.ReportMetric(quantileMicros(answered, 0.5), "answer-p50-µs")
	b.ReportMetric(quantileMicros(answered, 0.99), "answer-p99-µs")
}

// quantileMicros is the q-quantile of ds in microseconds.
func quantileMicros(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[int(q*float64(len(s)-1))].Nanoseconds()) / 1e3
}
