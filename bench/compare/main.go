package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/windforce/windforce/internal/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	url := fs.String("database-url", "", "postgres://… or sqlite://PATH (each system gets a fresh schema or file: PATH.windforce, PATH.river)")
	systems := fs.String("systems", "windforce,river", "which systems to run, in order: windforce, river or both")
	cfg := bench.Config{Progress: os.Stderr}
	fs.DurationVar(&cfg.Duration, "duration", 20*time.Second, "continuous mode: measured window")
	fs.DurationVar(&cfg.Warmup, "warmup", 3*time.Second, "continuous mode: uncounted warm-up")
	fs.IntVar(&cfg.Jobs, "jobs", 0, "burn-down mode: jobs inserted before the workers start (0: continuous)")
	fs.IntVar(&cfg.Workers, "workers", 100, "concurrency (windforce Concurrency, River MaxWorkers)")
	fs.IntVar(&cfg.Backlog, "backlog", 20000, "continuous mode: jobs kept waiting")
	sinkMode := fs.String("event-sink", bench.SinkNone, "windforce's workspace: none (records no events), disabled (records them, a sink nothing delivers to: the write cost) or nats (a relay delivers them to --nats-url: the whole cost)")
	natsURL := fs.String("nats-url", "nats://127.0.0.1:4222", "the NATS server of --event-sink disabled|nats")
	fs.IntVar(&cfg.LatencySamples, "latency-samples", 200, "pickup latency samples on the idle queue")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile of the whole run to this file (go tool pprof)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *url == "" {
		return errors.New("--database-url is required")
	}
	if *cpuProfile != "" {
		stopProfile, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	for _, name := range splitComma(*systems) {
		if err := runOne(ctx, name, *url, sinkConfig{*sinkMode, *natsURL}, cfg); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// sinkConfig is the event sink windforce's workspace gets
// (bench.Windforce.AddEventSink).
type sinkConfig struct{ mode, natsURL string }

// runOne measures one system on its own fresh database and prints its
// JSON line.
func runOne(ctx context.Context, name, url string, sc sinkConfig, cfg bench.Config) error {
	var sys bench.System
	var err error
	switch name {
	case "windforce":
		sys, err = newWindforce(ctx, sqliteSuffix(url, ".windforce"), sc)
	case "river":
		sys, err = newRiver(ctx, sqliteSuffix(url, ".river"))
	default:
		return fmt.Errorf("unknown system %q", name)
	}
	if err != nil {
		return err
	}
	res, err := bench.Run(ctx, sys, cfg)
	err = errors.Join(err, sys.Close(context.WithoutCancel(ctx)))
	if err != nil {
		return err
	}
	line, err := json.Marshal(res)
	if err != nil {
		return err
	}
	fmt.Println(string(line))
	return nil
}

// newWindforce opens windforce's fresh store and gives its workspace the
// event sink of sc.
func newWindforce(ctx context.Context, url string, sc sinkConfig) (*bench.Windforce, error) {
	w, err := bench.NewWindforce(ctx, url)
	if err != nil {
		return nil, err
	}
	if err := w.AddEventSink(ctx, sc.mode, sc.natsURL); err != nil {
		return nil, errors.Join(err, w.Close(context.WithoutCancel(ctx)))
	}
	return w, nil
}
