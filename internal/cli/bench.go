package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"

	"github.com/windforce/windforce/internal/bench"
)

// runBench runs `windforce bench`: no-op jobs on a fresh schema or file,
// a progress line every second on stderr, and the result as one JSON
// object, the last line on stdout.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := fs.String("database-url", env("WINDFORCE_DATABASE_URL", ""),
		"postgres://… (a fresh schema is made and dropped) or sqlite://PATH (a fresh file, deleted afterwards)")
	cfg := bench.Config{Progress: stderr}
	fs.DurationVar(&cfg.Duration, "duration", 20*time.Second, "continuous mode: measured window")
	fs.DurationVar(&cfg.Warmup, "warmup", 3*time.Second, "continuous mode: uncounted warm-up before the window")
	fs.IntVar(&cfg.Jobs, "jobs", 0, "burn-down mode: jobs inserted before the workers start (0: continuous mode)")
	fs.IntVar(&cfg.Workers, "workers", 100, "concurrency of the worker")
	fs.IntVar(&cfg.Backlog, "backlog", 20000, "continuous mode: jobs kept waiting")
	fs.IntVar(&cfg.LatencySamples, "latency-samples", 200, "pickup latency: single jobs enqueued on the idle queue")
	depth := fs.Bool("depth", false, "depth mode: claim latency with 1k and 1M jobs waiting")
	depthJobs := fs.Int("depth-jobs", 1_000_000, "depth mode: the deep queue's size")
	idle := fs.Duration("idle", 0, "idle mode: run one worker on the empty queue this long; report RSS, goroutines, connections")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	failing := fs.Bool("failing", false, "every job fails (one attempt each): throughput of a failure storm")
	if err := fs.Parse(args); err != nil {
		return &UsageError{Msg: err.Error()}
	}
	if *dbURL == "" {
		return &UsageError{Msg: "bench needs --database-url (postgres://… or sqlite://PATH)"}
	}
	sys, err := bench.NewWindforce(ctx, *dbURL)
	if err != nil {
		return err
	}
	sys.Failing = *failing
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return errors.Join(err, sys.Close(ctx))
		}
		defer stop()
	}
	var res any
	switch {
	case *idle > 0:
		res, err = bench.Idle(ctx, sys, cfg.Workers, *idle, stderr)
	case *depth:
		res, err = bench.Depth(ctx, sys.Store(), sys.Database(), bench.DepthConfig{Deep: *depthJobs, Progress: stderr})
	default:
		res, err = bench.Run(ctx, sys, cfg)
	}
	if cerr := sys.Close(context.WithoutCancel(ctx)); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	line, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("bench: encode result: %w", err)
	}
	fmt.Fprintln(stdout, string(line))
	return nil
}

// startCPUProfile writes a CPU profile to path until the returned function
// is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("bench: cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("bench: cpu profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
