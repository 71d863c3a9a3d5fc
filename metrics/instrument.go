package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/windforce/windforce/spine"
)

// Outcomes of one attempt as Instrument counts them.
const (
	StatusSuccess  = "success"
	StatusFailure  = "failure"
	StatusCanceled = "canceled"
	// StatusLost: the heartbeat found another owner; the worker writes nothing.
	StatusLost = "lost"
	// StatusReleased: the worker shut down and put the job back.
	StatusReleased = "released"
)

// Instrument wraps a worker's handler to count claims
// (windforce_jobs_claimed_total), outcomes (windforce_jobs_completed_total)
// and run time (windforce_job_run_seconds), by the job's pinned tag.
//
// A handler middleware sees the attempt, not the row the worker then
// writes, so the status is decided the way spine.Worker decides what to
// write (the job context's cause, the handler's error, the result's
// validity): a failed attempt with retries left counts as failure (its
// retry counts again), and a success whose fenced completion is refused
// later still counts as success. A handler panic counts as failure and
// goes on to the worker, which records it.
func (m *Metrics) Instrument(h spine.Handler) spine.Handler {
	if m == nil {
		return h
	}
	return func(ctx context.Context, job *spine.ClaimedJob) (res json.RawMessage, err error) {
		tag := job.Pin.Tag
		m.claimed.WithLabelValues(tag).Inc()
		start := time.Now()
		returned := false
		defer func() {
			m.runSeconds.WithLabelValues(tag).Observe(time.Since(start).Seconds())
			status := StatusFailure // a panic is on its way to the worker
			if returned {
				status = attemptStatus(ctx, res, err)
			}
			m.completed.WithLabelValues(status, tag).Inc()
		}()
		res, err = h(ctx, job)
		returned = true
		return res, err
	}
}

// attemptStatus mirrors spine.Worker.record: why the job context ended
// first, then the handler's error or a deadline, then the result.
func attemptStatus(ctx context.Context, res json.RawMessage, err error) string {
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, spine.ErrLostOwnership):
		return StatusLost
	case errors.Is(cause, spine.ErrShutdown):
		return StatusReleased
	case errors.Is(cause, spine.ErrJobCanceled):
		return StatusCanceled
	case err != nil || ctx.Err() != nil:
		return StatusFailure
	}
	if _, e := spine.CheckResult(res); e != nil {
		return StatusFailure
	}
	return StatusSuccess
}
