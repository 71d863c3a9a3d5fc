package metrics_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/windforce/windforce/metrics"
	"github.com/windforce/windforce/schedule"
)

// TestSchedulePass: a scheduler pass counts one enqueue per won tick that
// made a job, by workspace, and none for a skipped or unrunnable tick.
func TestSchedulePass(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Options{})
	m.SchedulePass(schedule.PassResult{Fired: []schedule.Fired{
		{Workspace: "a", Job: uuid.New()}, {Workspace: "a", Job: uuid.New()},
		{Workspace: "b", Job: uuid.Nil}, {Workspace: "c", Job: uuid.New()},
	}})
	m.SchedulePass(schedule.PassResult{})
	got := serve(t, m)
	got.Want(t, 2, "windforce_jobs_enqueued_total", "trigger", "schedule", "workspace", "a")
	got.Want(t, 1, "windforce_jobs_enqueued_total", "trigger", "schedule", "workspace", "c")
	if _, ok := got.Value("windforce_jobs_enqueued_total", "trigger", "schedule", "workspace", "b"); ok {
		t.Fatal("a skipped tick was counted")
	}
	var none *metrics.Metrics
	none.SchedulePass(schedule.PassResult{Fired: []schedule.Fired{{Workspace: "a", Job: uuid.New()}}})
}
