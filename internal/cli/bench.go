package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/windforce/windforce/internal/bench"
)

// runBench runs `windforce bench`: no-op jobs on a fresh schema or file,
// a progress line every second on stderr, and the result as one JSON
// object, the last line on stdout.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var conf config
	fs := newFlagSet("bench", stderr)
	fs.bind(cmdBench, &conf)
	dbURL := &conf.dbURL
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
	e2e := fs.Bool("e2e", false, "end-to-end mode: trivial bun jobs through the HTTP API of fresh installations (dev on SQLite, server+worker on a fresh Postgres database) against bare bun")
	e2eJobs := fs.Int("e2e-jobs", 100, "e2e mode: jobs (and bare bun spawns) per concurrency level; the concurrency-1 level's are the latency samples")
	e2eDB := fs.String("e2e-db", "both", "e2e mode: sqlite, postgres or both (both skips an unreachable Postgres, saying so)")
	e2eConc := fs.String("e2e-concurrency", "1,2,8", "e2e mode: concurrency levels (requests and bare spawns in flight); the worker gets the highest")
	e2eWarmup := fs.Int("e2e-warmup", 5, "e2e mode: uncounted jobs and bare spawns first")
	var wf e2eWarmFlags
	fs.BoolVar(&wf.warm, "warm", false, "e2e mode: also run the same action as a warm app (warm: true) at every level, and report the warm pool's memory")
	fs.BoolVar(&wf.throughput, "throughput", false, "e2e --warm: then run --throughput-jobs warm jobs with --throughput-concurrency requests in flight (jobs/s)")
	fs.IntVar(&wf.jobs, "throughput-jobs", 5000, "e2e --warm --throughput: warm jobs to run")
	fs.IntVar(&wf.clients, "throughput-concurrency", 32, "e2e --warm --throughput: requests in flight")
	fs.IntVar(&wf.workers, "e2e-worker-concurrency", 0, "e2e mode: the worker's --concurrency (0: the highest --e2e-concurrency level)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *e2e {
		ecfg, err := e2eConfig(*dbURL, *e2eDB, *e2eConc, *e2eJobs, *e2eWarmup)
		if err == nil {
			err = wf.apply(&ecfg)
		}
		if err != nil {
			return err
		}
		ecfg.Progress = stderr
		return runBenchE2E(ctx, ecfg, stdout)
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

// e2eConfig turns the e2e flags into a bench.E2EConfig. The Postgres
// server is --database-url when it is a postgres:// URL, else
// WINDFORCE_TEST_DATABASE_URL, else the local default server.
func e2eConfig(dbURL, dbs, levels string, jobs, warmup int) (bench.E2EConfig, error) {
	cfg := bench.E2EConfig{Jobs: jobs, Warmup: warmup}
	if jobs < 1 || warmup < 0 {
		return cfg, &UsageError{Msg: "--e2e-jobs must be at least 1 and --e2e-warmup at least 0"}
	}
	switch dbs {
	case "both":
		cfg.Databases, cfg.SkipUnavailablePostgres = []string{"sqlite", "postgres"}, true
	case "sqlite", "postgres":
		cfg.Databases = []string{dbs}
	default:
		return cfg, &UsageError{Msg: fmt.Sprintf("--e2e-db %q: want sqlite, postgres or both", dbs)}
	}
	for _, f := range strings.Split(levels, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 1 {
			return cfg, &UsageError{Msg: fmt.Sprintf("--e2e-concurrency %q: want positive integers separated by commas", levels)}
		}
		cfg.Concurrency = append(cfg.Concurrency, c)
	}
	switch {
	case strings.HasPrefix(dbURL, "postgres://"), strings.HasPrefix(dbURL, "postgresql://"):
		cfg.PostgresURL = dbURL
	case os.Getenv("WINDFORCE_TEST_DATABASE_URL") != "":
		cfg.PostgresURL = os.Getenv("WINDFORCE_TEST_DATABASE_URL")
	default:
		cfg.PostgresURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	bin, err := os.Executable()
	if err != nil {
		return cfg, fmt.Errorf("bench --e2e: find the windforce binary: %w", err)
	}
	cfg.Binary = bin
	return cfg, nil
}

// e2eWarmFlags are the flags of `bench --e2e --warm [--throughput]`.
type e2eWarmFlags struct {
	warm, throughput       bool
	jobs, clients, workers int
}

// apply sets them on cfg; --throughput without --warm, or counts below 1,
// are usage errors.
func (f e2eWarmFlags) apply(cfg *bench.E2EConfig) error {
	if f.throughput && !f.warm {
		return &UsageError{Msg: "--throughput measures warm jobs: add --warm"}
	}
	if f.throughput && (f.jobs < 1 || f.clients < 1) {
		return &UsageError{Msg: "--throughput-jobs and --throughput-concurrency must be at least 1"}
	}
	if f.workers < 0 {
		return &UsageError{Msg: "--e2e-worker-concurrency must be at least 0"}
	}
	cfg.Warm, cfg.WorkerConcurrency = f.warm, f.workers
	if f.throughput {
		cfg.BurstJobs, cfg.BurstClients = f.jobs, f.clients
	}
	return nil
}

// runBenchE2E runs `windforce bench --e2e`: progress on stderr, then the
// table and, as the last line, the report as one JSON object on stdout.
func runBenchE2E(ctx context.Context, cfg bench.E2EConfig, stdout io.Writer) error {
	rep, err := bench.E2E(ctx, cfg)
	if err != nil {
		return fmt.Errorf("bench --e2e: %w", err)
	}
	if err := bench.WriteE2ETable(stdout, rep); err != nil {
		return fmt.Errorf("bench --e2e: %w", err)
	}
	line, err := json.Marshal(rep)
	if err != nil {
		return fmt.Errorf("bench --e2e: encode result: %w", err)
	}
	fmt.Fprintln(stdout, string(line))
	return nil
}
