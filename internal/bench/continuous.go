package bench

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// feedBatch is the size of one top-up insert in the continuous mode.
const feedBatch = 2000

// continuous keeps cfg.Backlog jobs waiting while the workers run, and
// counts the jobs handled in the window that follows the warm-up.
func continuous(ctx context.Context, sys System, cfg Config, h *handled, res *Result) error {
	if err := insertChunks(ctx, sys, cfg.Backlog); err != nil {
		return err
	}
	inserted := h.count.Load() + int64(cfg.Backlog)
	feedCtx, stopFeed := context.WithCancel(ctx)
	fed := make(chan error, 1)
	go func() { fed <- feed(feedCtx, sys, cfg, h, inserted) }()

	start := time.Now()
	if err := sys.Start(ctx, cfg.Workers, h.hook); err != nil {
		stopFeed()
		return errors.Join(fmt.Errorf("start workers: %w", err), <-fed)
	}
	err := measureWindow(ctx, cfg, h, res, start)
	stopFeed()
	feedErr := <-fed
	if errors.Is(feedErr, context.Canceled) {
		feedErr = nil
	}
	return errors.Join(err, feedErr, sys.Stop(context.WithoutCancel(ctx)))
}

// feed tops the backlog up whenever it falls below cfg.Backlog.
func feed(ctx context.Context, sys System, cfg Config, h *handled, inserted int64) error {
	for ctx.Err() == nil {
		pending := inserted - h.count.Load()
		if pending >= int64(cfg.Backlog) {
			time.Sleep(2 * time.Millisecond) // pacing the feeder, not waiting for an event
			continue
		}
		k := int(min(int64(feedBatch), int64(cfg.Backlog)-pending))
		if err := sys.Insert(ctx, k); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("top up backlog: %w", err)
		}
		inserted += int64(k)
	}
	return ctx.Err()
}

// measureWindow waits out the warm-up, then counts handled jobs for
// cfg.Duration, printing progress every second.
func measureWindow(ctx context.Context, cfg Config, h *handled, res *Result, start time.Time) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var windowStart time.Time
	var base int64
	last, lastAt := h.count.Load(), start
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case now := <-tick.C:
			n := h.count.Load()
			phase := "warm-up"
			if windowStart.IsZero() && now.Sub(start) >= cfg.Warmup {
				windowStart, base = now, n
			}
			if !windowStart.IsZero() {
				phase = "measuring"
			}
			fmt.Fprintf(cfg.Progress, "%s %s continuous (%s): %.0fs, %.0f jobs/s\n", res.System, res.Database,
				phase, now.Sub(start).Seconds(), float64(n-last)/now.Sub(lastAt).Seconds())
			last, lastAt = n, now
			if !windowStart.IsZero() && now.Sub(windowStart) >= cfg.Duration {
				res.Jobs = n - base
				res.Seconds = now.Sub(windowStart).Seconds()
				return nil
			}
		}
	}
}
