package schedule

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/windforce/windforce/spine"
)

// Defaults of Scheduler.
const (
	DefaultInterval   = time.Second
	DefaultBatchLimit = 1000
)

// Scheduler fires due schedule ticks through the one enqueue path. Every
// server runs one: FireTick moves a tick with a compare-and-set in the
// same transaction as the enqueue, so of many schedulers seeing one due
// tick exactly one makes its job.
type Scheduler struct {
	Store      Store
	Interval   time.Duration // between passes; default 1s
	BatchLimit int           // due schedules read per pass; default 1000
	// Clock is the scheduler's time (spine.Clock: Wall, nil is time.Now).
	// Ticks are computed in the process, so servers' clocks should agree
	// (NTP) — a skewed one fires early or late, never twice.
	Clock  spine.Clock
	Logger *slog.Logger
	// OnPass, when set, is called after every pass (metrics, tests).
	OnPass func(PassResult)

	life spine.Lifecycle
}

// PassResult is what one pass did.
type PassResult struct {
	// Now is the clock reading the pass used.
	Now time.Time
	// Due is how many due schedules the pass read.
	Due int
	// Fired are the ticks this scheduler won (including skipped and
	// unrunnable ones, whose Job is uuid.Nil).
	Fired []Fired
	// Errors counts schedules that failed this pass.
	Errors int
}

// Fired is one tick a scheduler won.
type Fired struct {
	Schedule  uuid.UUID
	Workspace string
	Tick      time.Time
	Next      time.Time
	// Job is the enqueued job; uuid.Nil when no-overlap skipped the tick
	// or the action could not run.
	Job uuid.UUID
}

// Start runs a pass at once and then every Interval until Stop or ctx ends.
func (s *Scheduler) Start(ctx context.Context) error {
	if s.Interval <= 0 {
		s.Interval = DefaultInterval
	}
	if s.BatchLimit <= 0 {
		s.BatchLimit = DefaultBatchLimit
	}
	return s.life.StartEvery(ctx, s.Interval, s.pass)
}

// Stop ends the scheduler and waits for a pass in progress.
func (s *Scheduler) Stop() { s.life.Stop() }

// pass fires every due tick once. One failing schedule is logged and the
// others go on.
func (s *Scheduler) pass(ctx context.Context) {
	res := PassResult{Now: s.Clock.Wall()}
	defer func() {
		if s.OnPass != nil {
			s.OnPass(res)
		}
	}()
	due, err := s.Store.DueSchedules(ctx, res.Now, s.BatchLimit)
	if err != nil {
		if ctx.Err() == nil {
			s.log().Error("scheduler: read due schedules", "err", err)
			res.Errors++
		}
		return
	}
	res.Due = len(due)
	for _, sc := range due {
		if ctx.Err() != nil {
			return
		}
		f, ok, err := s.fire(ctx, sc, res.Now)
		if err != nil {
			res.Errors++
		}
		if ok {
			res.Fired = append(res.Fired, f)
		}
	}
}

// fire fires sc's due tick: ok when this scheduler won it.
func (s *Scheduler) fire(ctx context.Context, sc Schedule, now time.Time) (Fired, bool, error) {
	log := s.log().With("schedule", sc.ID, "workspace", sc.Workspace, "app", sc.App, "action", sc.Action)
	c, err := ParseCron(sc.Cron, sc.Timezone)
	var next time.Time
	if err == nil {
		if next = NextTick(c, sc.NextRunAt, now); next.IsZero() {
			err = &SpecError{Field: FieldCron, Value: sc.Cron, Err: errNeverFires}
		}
	}
	if err != nil {
		// Create validated it, so only a changed zone database gets here;
		// disable rather than fail every second forever.
		log.Error("scheduler: schedule has no next tick; disabling it", "err", err)
		if derr := s.Store.SetScheduleEnabled(ctx, sc.Workspace, sc.ID, false, time.Time{}); derr != nil {
			log.Error("scheduler: disable schedule", "err", derr)
		}
		return Fired{}, false, err
	}
	fired, job, err := s.Store.FireTick(ctx, sc, next)
	f := Fired{Schedule: sc.ID, Workspace: sc.Workspace, Tick: sc.NextRunAt, Next: next, Job: job}
	switch {
	case err != nil && fired:
		log.Warn("scheduler: tick advanced without a job: the action cannot run", "tick", sc.NextRunAt, "next", next, "err", err)
	case err != nil:
		if ctx.Err() == nil {
			log.Error("scheduler: fire tick", "tick", sc.NextRunAt, "err", err)
		}
	case fired && job == uuid.Nil:
		log.Info("scheduler: tick skipped: the previous job is still queued or running", "tick", sc.NextRunAt, "next", next)
	case fired:
		log.Debug("scheduler: tick fired", "tick", sc.NextRunAt, "next", next, "job", job)
	}
	return f, fired, err
}

func (s *Scheduler) log() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}
