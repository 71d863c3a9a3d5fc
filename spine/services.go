package spine

import (
	"context"
	"log/slog"
	"time"
)

// Clock is the one clock convention of windforce's services (reaper,
// sweeper, worker, scheduler, API, console): a field named Clock that tests
// set to a fake and production leaves nil. Nil reads two ways, by what the
// time is for: passed to the store as a parameter's Now (Store), nil is
// the zero time, so the SQL uses the database's clock, which keeps many
// servers consistent; decided in Go (a cut-off, a cron tick, a token's
// expiry: Wall), nil is time.Now.
type Clock func() time.Time

// Store is the Now to pass to the store: the zero time (the database's
// clock) for a nil Clock.
func (c Clock) Store() time.Time {
	if c == nil {
		return time.Time{}
	}
	return c()
}

// Wall is the time for a decision made in Go: time.Now for a nil Clock.
func (c Clock) Wall() time.Time {
	if c == nil {
		return time.Now()
	}
	return c()
}

// Reaper requeues the jobs of dead workers (invariant 4). Every server runs
// one; concurrent reapers never handle one job twice because Reap locks with
// SKIP LOCKED (Postgres) or runs on the single writer (SQLite).
type Reaper struct {
	Store         Store
	Interval      time.Duration // default 15s
	ZombieTimeout time.Duration // default 60s
	RestartLimit  int           // default 3
	BatchLimit    int           // rows per pass, default 1000
	Clock         Clock
	Logger        *slog.Logger
	// OnReap, when set, is called after each pass that did something
	// (metrics, tests).
	OnReap func(ReapResult)

	life Lifecycle
}

// Start runs a pass at once and then every Interval until Stop or ctx ends.
func (r *Reaper) Start(ctx context.Context) error {
	if r.Interval <= 0 {
		r.Interval = 15 * time.Second
	}
	if r.ZombieTimeout <= 0 {
		r.ZombieTimeout = 60 * time.Second
	}
	if r.RestartLimit <= 0 {
		r.RestartLimit = 3
	}
	if r.BatchLimit <= 0 {
		r.BatchLimit = 1000
	}
	return r.life.Start(ctx, func(ctx context.Context) {
		if err := r.Store.SetZombieTimeout(ctx, r.ZombieTimeout); err != nil {
			logger(r.Logger).Warn("reaper: record zombie timeout", "err", err)
		}
		every(ctx, r.Interval, r.pass)
	})
}

// Stop ends the reaper and waits for a pass in progress.
func (r *Reaper) Stop() { r.life.Stop() }

// pass reaps until a batch comes back short, so a backlog of zombies after
// an outage is cleared in one tick.
func (r *Reaper) pass(ctx context.Context) {
	for ctx.Err() == nil {
		res, err := r.Store.Reap(ctx, ReapParams{
			Now: r.Clock.Store(), ZombieTimeout: r.ZombieTimeout,
			RestartLimit: r.RestartLimit, Limit: r.BatchLimit,
		})
		if err != nil {
			if ctx.Err() == nil {
				logger(r.Logger).Error("reaper pass failed", "err", err)
			}
			return
		}
		n := len(res.Requeued) + len(res.Failed) + len(res.Canceled)
		if n > 0 {
			logger(r.Logger).Info("reaped zombie jobs", "requeued", len(res.Requeued),
				"failed", len(res.Failed), "canceled", len(res.Canceled))
			if r.OnReap != nil {
				r.OnReap(res)
			}
		}
		if n < r.BatchLimit {
			return
		}
	}
}

// Sweeper deletes finished jobs older than the retention (invariant 8).
type Sweeper struct {
	Store     Store
	Retention time.Duration // default 168h
	Interval  time.Duration // default 10m
	BatchSize int           // default 1000
	// Clock gives the sweep's reference time (Wall: Sweep compares against
	// a cut-off computed here, so it needs a real time).
	Clock  Clock
	Logger *slog.Logger

	life Lifecycle
}

// Start runs a sweep at once and then every Interval until Stop or ctx ends.
func (s *Sweeper) Start(ctx context.Context) error {
	if s.Retention <= 0 {
		s.Retention = 168 * time.Hour
	}
	if s.Interval <= 0 {
		s.Interval = 10 * time.Minute
	}
	if s.BatchSize <= 0 {
		s.BatchSize = 1000
	}
	return s.life.StartEvery(ctx, s.Interval, s.pass)
}

// Stop ends the sweeper and waits for a sweep in progress.
func (s *Sweeper) Stop() { s.life.Stop() }

func (s *Sweeper) pass(ctx context.Context) {
	n, err := s.Store.Sweep(ctx, SweepParams{Before: s.Clock.Wall().Add(-s.Retention), BatchSize: s.BatchSize})
	if err != nil {
		if ctx.Err() == nil {
			logger(s.Logger).Error("retention sweep failed", "err", err)
		}
		return
	}
	if n > 0 {
		logger(s.Logger).Info("retention sweep deleted finished jobs", "jobs", n)
	}
}

// every runs fn now and then on each tick until ctx ends.
func every(ctx context.Context, interval time.Duration, fn func(context.Context)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		fn(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
