package metrics_test

import (
	"testing"
	"time"

	"github.com/windforce/windforce/internal/teststore"
	"github.com/windforce/windforce/metrics"
	"github.com/windforce/windforce/spine"
)

// TestQueueGauges: a scrape over HTTP reads the queue from the database,
// per workspace and tag, with the figures the rows make.
func TestQueueGauges(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, s spine.Store) {
		old := time.Now().Add(-90 * time.Second)
		enqueue(t, s, "a", "default", old, time.Time{})
		enqueue(t, s, "a", "default", time.Time{}, time.Time{})
		enqueue(t, s, "a", "default", time.Time{}, time.Time{})
		enqueue(t, s, "a", "default", time.Time{}, time.Now().Add(time.Hour))
		enqueue(t, s, "b", "gpu", time.Time{}, time.Time{})
		claimed, err := s.Claim(t.Context(), spine.ClaimParams{Worker: "w1", Tags: []string{"gpu"}, Limit: 1})
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claim: %v, %d jobs", err, len(claimed))
		}

		m := metrics.New(metrics.Options{Health: s})
		got := serve(t, m)
		got.Want(t, 1, "windforce_queue_health_up")
		got.Want(t, 3, "windforce_queue_waiting", "workspace", "a", "tag", "default")
		got.Want(t, 1, "windforce_queue_scheduled", "workspace", "a", "tag", "default")
		got.Want(t, 0, "windforce_queue_running", "workspace", "a", "tag", "default")
		got.Want(t, 0, "windforce_queue_waiting", "workspace", "b", "tag", "gpu")
		got.Want(t, 1, "windforce_queue_running", "workspace", "b", "tag", "gpu")
		got.Want(t, 0, "windforce_queue_expired_heartbeats", "workspace", "b", "tag", "gpu")
		got.Want(t, 0, "windforce_queue_failed_24h", "workspace", "a", "tag", "default")
		age, ok := got.Value("windforce_queue_oldest_waiting_seconds", "workspace", "a", "tag", "default")
		if !ok || age < 89 || age > 3600 {
			t.Fatalf("oldest waiting %v s (found %v), want about 90", age, ok)
		}

		// The figures are read at scrape time: a new job shows at once, on
		// a second Metrics too (another server over the same database).
		enqueue(t, s, "a", "default", time.Time{}, time.Time{})
		serve(t, m).Want(t, 4, "windforce_queue_waiting", "workspace", "a", "tag", "default")
		serve(t, metrics.New(metrics.Options{Health: s})).Want(t, 4, "windforce_queue_waiting", "workspace", "a", "tag", "default")
	})
}

// TestQueueGaugesDatabaseDown: a failed read is up=0 with no stale queue
// figures, and the process counters are still served.
func TestQueueGaugesDatabaseDown(t *testing.T) {
	t.Parallel()
	s := teststore.SQLite(t)
	enqueue(t, s, "a", "default", time.Time{}, time.Time{})
	m := metrics.New(metrics.Options{Health: s})
	m.JobEnqueued(spine.TriggerAPI, "a")
	serve(t, m).Want(t, 1, "windforce_queue_waiting", "workspace", "a", "tag", "default")
	s.Close()
	got := serve(t, m)
	got.Want(t, 0, "windforce_queue_health_up")
	if _, ok := got["windforce_queue_waiting"]; ok {
		t.Fatal("queue figures served while the database is down")
	}
	got.Want(t, 1, "windforce_jobs_enqueued_total", "trigger", "api", "workspace", "a")
}
