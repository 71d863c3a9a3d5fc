package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"time"
)

// Config says what Run measures.
type Config struct {
	// Workers is the concurrency of the one worker (River: MaxWorkers of its
	// one queue). Default 100.
	Workers int
	// Duration is the measured window of the continuous mode. Default 20s.
	Duration time.Duration
	// Warmup runs before the window and is not counted. Default 3s.
	Warmup time.Duration
	// Jobs, when positive, selects the burn-down mode: Jobs are inserted
	// before the workers start, and the time to finish them all is measured.
	Jobs int
	// Backlog is how many jobs the continuous mode keeps waiting. Default
	// 20000.
	Backlog int
	// LatencySamples is how many single jobs the pickup latency phase
	// enqueues on the idle queue. Default 200.
	LatencySamples int
	// Progress receives a line every second; nil discards.
	Progress io.Writer
}

func (c *Config) defaults() {
	if c.Workers <= 0 {
		c.Workers = 100
	}
	if c.Duration <= 0 {
		c.Duration = 20 * time.Second
	}
	if c.Warmup < 0 {
		c.Warmup = 0
	} else if c.Warmup == 0 {
		c.Warmup = 3 * time.Second
	}
	if c.Backlog <= 0 {
		c.Backlog = 20000
	}
	if c.LatencySamples <= 0 {
		c.LatencySamples = 200
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// Result is one run's figures; the command prints it as JSON.
type Result struct {
	System        string  `json:"system"`
	Mode          string  `json:"mode"`
	Database      string  `json:"database"`
	Workers       int     `json:"workers"`
	Jobs          int64   `json:"jobs"`
	Seconds       float64 `json:"seconds"`
	JobsPerSec    float64 `json:"jobs_per_sec"`
	PickupP50     float64 `json:"pickup_p50_ms"`
	PickupP99     float64 `json:"pickup_p99_ms"`
	PickupSamples int     `json:"pickup_samples"`
	PeakRSSMiB    float64 `json:"peak_rss_mib"`
	GoVersion     string  `json:"go_version"`
}

// Run measures sys: pickup latency on the idle queue first, then
// throughput, continuous or burn-down. It stops sys's workers before it
// returns but does not Close sys.
func Run(ctx context.Context, sys System, cfg Config) (Result, error) {
	cfg.defaults()
	res := Result{System: sys.Name(), Database: sys.Database(), Workers: cfg.Workers,
		Mode: "continuous", GoVersion: runtime.Version()}
	if cfg.Jobs > 0 {
		res.Mode = "burndown"
	}
	h := &handled{}
	lat, err := pickupLatency(ctx, sys, cfg, h)
	if err != nil {
		return res, err
	}
	res.PickupP50, res.PickupP99, res.PickupSamples = percentile(lat, 50), percentile(lat, 99), len(lat)
	fmt.Fprintf(cfg.Progress, "%s %s pickup latency: p50 %.2f ms, p99 %.2f ms (%d samples)\n",
		res.System, res.Database, res.PickupP50, res.PickupP99, len(lat))
	if cfg.Jobs > 0 {
		err = burnDown(ctx, sys, cfg, h, &res)
	} else {
		err = continuous(ctx, sys, cfg, h, &res)
	}
	res.PeakRSSMiB = procStatusMiB("VmHWM")
	if res.Seconds > 0 {
		res.JobsPerSec = float64(int64(float64(res.Jobs)/res.Seconds*10)) / 10
	}
	return res, err
}

// handled counts jobs the handler ran and, while latency is being
// measured, passes each start time on.
type handled struct {
	count   atomic.Int64
	latency atomic.Pointer[chan time.Time]
}

func (h *handled) hook(started time.Time) {
	h.count.Add(1)
	if ch := h.latency.Load(); ch != nil {
		select {
		case *ch <- started:
		default:
		}
	}
}

// pickupLatency enqueues one job at a time on the idle queue and measures
// from just before the enqueue call to the moment the handler starts it.
// The first few samples warm the connections and are dropped.
func pickupLatency(ctx context.Context, sys System, cfg Config, h *handled) ([]time.Duration, error) {
	const warm = 10
	ch := make(chan time.Time, 1)
	h.latency.Store(&ch)
	defer h.latency.Store(nil)
	if err := sys.Start(ctx, cfg.Workers, h.hook); err != nil {
		return nil, fmt.Errorf("start workers: %w", err)
	}
	out := make([]time.Duration, 0, cfg.LatencySamples)
	for i := range cfg.LatencySamples + warm {
		// Let the previous job's completion land, so the queue is idle.
		time.Sleep(10 * time.Millisecond)
		before := time.Now()
		if err := sys.InsertOne(ctx); err != nil {
			return nil, errors.Join(fmt.Errorf("insert one job: %w", err), sys.Stop(ctx))
		}
		select {
		case started := <-ch:
			if i >= warm {
				out = append(out, started.Sub(before))
			}
		case <-time.After(10 * time.Second):
			return nil, errors.Join(errors.New("pickup latency: a job was not picked up within 10s"), sys.Stop(ctx))
		case <-ctx.Done():
			return nil, errors.Join(ctx.Err(), sys.Stop(ctx))
		}
	}
	if err := sys.Stop(ctx); err != nil {
		return nil, fmt.Errorf("stop workers: %w", err)
	}
	return out, nil
}

// burnDown inserts cfg.Jobs, then times the workers from start until the
// last job is handled and every completion is written (Stop waits for it).
func burnDown(ctx context.Context, sys System, cfg Config, h *handled, res *Result) error {
	fmt.Fprintf(cfg.Progress, "%s %s burn-down: inserting %d jobs\n", res.System, res.Database, cfg.Jobs)
	if err := insertChunks(ctx, sys, cfg.Jobs); err != nil {
		return err
	}
	base := h.count.Load()
	start := time.Now()
	if err := sys.Start(ctx, cfg.Workers, h.hook); err != nil {
		return fmt.Errorf("start workers: %w", err)
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last, lastAt := base, start
	for h.count.Load()-base < int64(cfg.Jobs) {
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), sys.Stop(context.WithoutCancel(ctx)))
		case now := <-tick.C:
			if now.Sub(lastAt) >= time.Second {
				n := h.count.Load()
				fmt.Fprintf(cfg.Progress, "%s %s burn-down: %.0fs %d/%d jobs, %.0f jobs/s\n", res.System, res.Database,
					now.Sub(start).Seconds(), n-base, cfg.Jobs, float64(n-last)/now.Sub(lastAt).Seconds())
				last, lastAt = n, now
			}
		}
	}
	if err := sys.Stop(ctx); err != nil {
		return fmt.Errorf("stop workers: %w", err)
	}
	res.Seconds = time.Since(start).Seconds()
	res.Jobs = int64(cfg.Jobs)
	return nil
}

// insertChunks inserts n jobs in batches of at most 5000.
func insertChunks(ctx context.Context, sys System, n int) error {
	for n > 0 {
		k := min(n, 5000)
		if err := sys.Insert(ctx, k); err != nil {
			return fmt.Errorf("insert %d jobs: %w", k, err)
		}
		n -= k
	}
	return nil
}
