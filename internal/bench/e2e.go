package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"text/tabwriter"
	"time"
)

// E2EConfig says what E2E measures. Jobs are hello/greet of the bundled
// example (a trivial bun module) run through the HTTP API with `?wait`,
// each on a fresh installation started from the real binary.
type E2EConfig struct {
	// Binary is the windforce executable to start (dev, server, worker).
	Binary string
	// Databases are "sqlite" (`windforce dev`) and "postgres" (`windforce
	// server` and `windforce worker` on a fresh database), in run order.
	// Default both.
	Databases []string
	// PostgresURL is the server on which a fresh database is created for
	// the postgres run, and dropped afterwards.
	PostgresURL string
	// SkipUnavailablePostgres turns an unreachable Postgres into a skipped
	// run (listed in the report) instead of an error.
	SkipUnavailablePostgres bool
	// Jobs is how many jobs (and bare spawns) each concurrency level runs;
	// the concurrency-1 level's round trips are also the latency samples.
	// Default 100.
	Jobs int
	// Concurrency are the levels measured: that many requests (and bare
	// spawns) in flight at once. 1 is always included. Default 1, 2, 8.
	// The worker runs with the highest as its --concurrency.
	Concurrency []int
	// Warmup jobs and bare spawns run before the measured ones (the first
	// job of a commit prepares its copy). Default 5.
	Warmup int
	// Warm adds the same action as a warm app (hellowarm, `warm: true`,
	// in a source of its own) at every level, beside cold and bare bun,
	// and reports the warm pool's memory afterwards.
	Warm bool
	// BurstJobs warm jobs with BurstClients requests in flight are run
	// after the levels when both are set (with Warm): the throughput mode.
	BurstJobs, BurstClients int
	// WorkerConcurrency is the worker's --concurrency; default the highest
	// level.
	WorkerConcurrency int
	// Progress receives a line per phase; nil discards.
	Progress io.Writer
}

func (c *E2EConfig) defaults() {
	if len(c.Databases) == 0 {
		c.Databases = []string{"sqlite", "postgres"}
	}
	if c.Jobs <= 0 {
		c.Jobs = 100
	}
	if len(c.Concurrency) == 0 {
		c.Concurrency = []int{1, 2, 8}
	}
	c.Concurrency = slices.DeleteFunc(append(slices.Clone(c.Concurrency), 1), func(n int) bool { return n < 1 })
	slices.Sort(c.Concurrency)
	c.Concurrency = slices.Compact(c.Concurrency)
	if c.Warmup < 0 {
		c.Warmup = 0
	} else if c.Warmup == 0 {
		c.Warmup = 5
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if c.WorkerConcurrency <= 0 {
		c.WorkerConcurrency = slices.Max(c.Concurrency)
	}
}

// E2EReport is one end-to-end run; the command prints it as a table and
// then as one JSON line.
type E2EReport struct {
	Mode              string      `json:"mode"` // "e2e"
	Jobs              int         `json:"jobs"`
	WorkerConcurrency int         `json:"worker_concurrency"`
	Bun               string      `json:"bun_version"`
	GoVersion         string      `json:"go_version"`
	CPUs              int         `json:"cpus"`
	Results           []E2EResult `json:"results"`
	Skipped           []E2ESkip   `json:"skipped,omitempty"`
}

// E2EResult is one database's figures next to bare bun measured in the
// same minutes. Times are in milliseconds.
type E2EResult struct {
	Database string `json:"database"`
	// BareStartP50 and BareStartP99: one bare bun spawn, from the spawn to
	// its result file read back.
	BareStartP50 float64 `json:"bare_start_p50_ms"`
	BareStartP99 float64 `json:"bare_start_p99_ms"`
	// WaitP50 and WaitP99: one `POST …/run/hello/greet?wait=60s`, from
	// sending it to the successful outcome, one request at a time.
	WaitP50 float64 `json:"wait_p50_ms"`
	WaitP99 float64 `json:"wait_p99_ms"`
	// WaitP50Ratio and WaitP99Ratio are the wait figures over bare bun's.
	WaitP50Ratio float64 `json:"wait_p50_ratio"`
	WaitP99Ratio float64 `json:"wait_p99_ratio"`
	// OverheadP50 is WaitP50 minus BareStartP50: what windforce adds to a
	// job (goal: at most 10 ms).
	OverheadP50 float64 `json:"overhead_p50_ms"`
	Samples     int     `json:"samples"`
	// Breakdown splits the same round trips by the job's own timestamps.
	Breakdown  E2EBreakdown    `json:"breakdown"`
	Throughput []E2EThroughput `json:"throughput"`
	// Warm is the warm action's figures (--warm).
	Warm *E2EWarm `json:"warm,omitempty"`
}

// E2EBreakdown is where a `?wait` round trip's time goes, as p50s over the
// concurrency-1 jobs or a burst's sample (each part's p50 on its own, so
// they need not add up to the round trip's), from the timestamps the
// server recorded.
type E2EBreakdown struct {
	// QueuedP50 is created_at to started_at: enqueue to claim.
	QueuedP50 float64 `json:"queued_p50_ms"`
	// RunP50 is started_at to completed_at: the worker starting the job's
	// process, bun running it, and the result read and completed.
	RunP50 float64 `json:"run_p50_ms"`
	// RestP50 is the round trip minus created_at to completed_at: HTTP,
	// the enqueue transaction, and the wait being answered after the
	// completion.
	RestP50 float64 `json:"rest_p50_ms"`
}

// trip is one measured `?wait` request.
type trip struct {
	id   string
	took time.Duration
}

// breakdown reads each trip's job back (after the measurement, so the
// reads do not disturb it) and splits the round trips.
func breakdown(ctx context.Context, api *apiClient, trips []trip) (E2EBreakdown, error) {
	var queued, run, rest []time.Duration
	for _, tr := range trips {
		created, started, completed, err := api.jobTimes(ctx, tr.id)
		if err != nil {
			return E2EBreakdown{}, err
		}
		queued = append(queued, started.Sub(created))
		run = append(run, completed.Sub(started))
		rest = append(rest, tr.took-completed.Sub(created))
	}
	return E2EBreakdown{QueuedP50: percentile(queued, 50), RunP50: percentile(run, 50), RestP50: percentile(rest, 50)}, nil
}

// E2EThroughput is one concurrency level: Jobs jobs with that many
// requests in flight, against Jobs bare spawns that many at a time.
type E2EThroughput struct {
	Concurrency    int     `json:"concurrency"`
	Seconds        float64 `json:"seconds"`
	JobsPerSec     float64 `json:"jobs_per_sec"`
	BareSeconds    float64 `json:"bare_seconds"`
	BareJobsPerSec float64 `json:"bare_jobs_per_sec"`
	// TimeRatio is Seconds over BareSeconds (goal: at most 1.3).
	TimeRatio float64 `json:"time_ratio"`
}

// E2ESkip is a database that was not measured, and why.
type E2ESkip struct {
	Database string `json:"database"`
	Reason   string `json:"reason"`
}

// E2E measures trivial bun jobs end to end. For each database it starts a
// fresh installation from cfg.Binary in a temporary directory, warms it
// and bare bun up, then for each concurrency level runs cfg.Jobs bare bun
// spawns and cfg.Jobs `?wait` requests, each side with that many in
// flight, bare first. Everything it made is removed before it returns.
func E2E(ctx context.Context, cfg E2EConfig) (E2EReport, error) {
	cfg.defaults()
	rep := E2EReport{Mode: "e2e", Jobs: cfg.Jobs, WorkerConcurrency: cfg.WorkerConcurrency,
		GoVersion: runtime.Version(), CPUs: runtime.NumCPU()}
	if cfg.Binary == "" {
		return rep, errors.New("e2e: no windforce binary to start")
	}
	tmp, err := os.MkdirTemp("", "windforce-bench-e2e-")
	if err != nil {
		return rep, fmt.Errorf("e2e: %w", err)
	}
	// Searchable, as a worker's /var/lib/windforce is: the job sandbox
	// then starts bwrap directly as each job's uid (runner/sandbox/direct.go).
	if err := os.Chmod(tmp, 0o711); err != nil {
		return rep, fmt.Errorf("e2e: %w", err)
	}
	defer func() {
		if err := removeTree(tmp); err != nil {
			fmt.Fprintf(cfg.Progress, "e2e: cleanup: %v\n", err)
		}
	}()
	bare, err := newBareBun(mkdir(tmp, "bare"))
	if err != nil {
		return rep, err
	}
	rep.Bun = bare.version(ctx)
	for _, db := range cfg.Databases {
		res, err := e2eDatabase(ctx, cfg, db, bare, mkdir(tmp, db))
		if errors.Is(err, ErrPostgresUnavailable) && cfg.SkipUnavailablePostgres {
			fmt.Fprintf(cfg.Progress, "e2e %s: SKIPPED: %v\n", db, err)
			rep.Skipped = append(rep.Skipped, E2ESkip{Database: db, Reason: err.Error()})
			continue
		}
		if err != nil {
			return rep, err
		}
		rep.Results = append(rep.Results, res)
	}
	return rep, nil
}

// mkdir makes dir/name (the temporary directory's own subfolders; a
// failure shows when the first file is written there).
func mkdir(dir, name string) string {
	p := filepath.Join(dir, name)
	_ = os.Mkdir(p, 0o755)
	return p
}

// e2eDatabase measures one database against bare bun.
func e2eDatabase(ctx context.Context, cfg E2EConfig, db string, bare *bareBun, dir string) (res E2EResult, err error) {
	res.Database = db
	workers := cfg.WorkerConcurrency
	var s *setup
	switch db {
	case "sqlite":
		fmt.Fprintf(cfg.Progress, "e2e sqlite: starting windforce dev (worker concurrency %d)\n", workers)
		s, err = startDev(cfg.Binary, dir, workers)
	case "postgres":
		fmt.Fprintf(cfg.Progress, "e2e postgres: fresh database, windforce server and worker (concurrency %d)\n", workers)
		s, err = startPostgresCluster(ctx, cfg.Binary, dir, cfg.PostgresURL, workers)
	default:
		return res, fmt.Errorf("e2e: unknown database %q (want sqlite or postgres)", db)
	}
	if err != nil {
		return res, err
	}
	defer func() {
		if cerr := s.close(context.WithoutCancel(ctx)); cerr != nil {
			err = errors.Join(err, fmt.Errorf("e2e %s: shut down: %w", db, cerr))
		}
	}()
	// A failed request says why when a process died under it.
	fail := func(what string, err error) error {
		if why := s.alive(); why != nil {
			err = errors.Join(err, why)
		}
		return fmt.Errorf("e2e %s: %s: %w", db, what, err)
	}
	if cfg.Warm {
		fmt.Fprintf(cfg.Progress, "e2e %s: adding the warm app %s (source %s)\n", db, warmApp, warmSource)
		if err := addWarmSource(ctx, s.api, s.gitDir); err != nil {
			return res, fail("warm source", err)
		}
		res.Warm = &E2EWarm{}
	}
	for range cfg.Warmup {
		if _, _, err := s.api.greetWait(ctx); err != nil {
			return res, fail("warm-up job", err)
		}
		if _, err := bare.once(ctx); err != nil {
			return res, fail("warm-up bare spawn", err)
		}
		if cfg.Warm {
			if _, _, err := s.api.greetWarm(ctx); err != nil {
				return res, fail("warm-up warm job", err)
			}
		}
	}
	for _, c := range cfg.Concurrency {
		bareTook, bareLat, err := runConcurrently(ctx, cfg.Jobs, c, bare.once)
		if err != nil {
			return res, fail(fmt.Sprintf("bare bun at concurrency %d", c), err)
		}
		lvl, err := level(ctx, cfg.Jobs, c, s.api.greetWait)
		if err != nil {
			return res, fail(fmt.Sprintf("jobs at concurrency %d", c), err)
		}
		t := lvl.throughput(cfg.Jobs, c, bareTook)
		res.Throughput = append(res.Throughput, t)
		fmt.Fprintf(cfg.Progress, "e2e %s: concurrency %d: %d jobs in %.2fs (%.1f/s), bare bun %.2fs (%.1f/s): %.2fx\n",
			db, c, cfg.Jobs, t.Seconds, t.JobsPerSec, t.BareSeconds, t.BareJobsPerSec, t.TimeRatio)
		if c == 1 {
			res.BareStartP50, res.BareStartP99 = percentile(bareLat, 50), percentile(bareLat, 99)
			res.WaitP50, res.WaitP99 = percentile(lvl.lat, 50), percentile(lvl.lat, 99)
			res.WaitP50Ratio, res.WaitP99Ratio = ratio(res.WaitP50, res.BareStartP50), ratio(res.WaitP99, res.BareStartP99)
			res.OverheadP50 = round3(res.WaitP50 - res.BareStartP50)
			res.Samples = len(lvl.lat)
			if res.Breakdown, err = breakdown(ctx, s.api, lvl.trips); err != nil {
				return res, fail("read the jobs' timestamps", err)
			}
		}
		if !cfg.Warm {
			continue
		}
		if err := warmLevel(ctx, cfg, s, c, bareTook, &res); err != nil {
			return res, fail(fmt.Sprintf("warm jobs at concurrency %d", c), err)
		}
	}
	if !cfg.Warm {
		return res, nil
	}
	if cfg.BurstJobs > 0 && cfg.BurstClients > 0 {
		fmt.Fprintf(cfg.Progress, "e2e %s: throughput: %d warm jobs, %d requests in flight\n", db, cfg.BurstJobs, cfg.BurstClients)
		if res.Warm.Burst, err = burst(ctx, s.api, cfg.BurstJobs, cfg.BurstClients); err != nil {
			return res, fail("warm throughput", err)
		}
		fmt.Fprintf(cfg.Progress, "e2e %s: throughput: %.1f warm jobs/s\n", db, res.Warm.Burst.JobsPerSec)
	}
	if res.Warm.Memory, err = warmMemory(s.workerPID()); err != nil {
		return res, fail("warm pool memory", err)
	}
	return res, nil
}

// warmLevel measures the warm action at concurrency c against the same
// level's bare spawns (bareTook) and adds it to res.Warm; at c = 1 its
// round trips are the warm latency samples.
func warmLevel(ctx context.Context, cfg E2EConfig, s *setup, c int, bareTook time.Duration, res *E2EResult) error {
	lvl, err := level(ctx, cfg.Jobs, c, s.api.greetWarm)
	if err != nil {
		return err
	}
	t := lvl.throughput(cfg.Jobs, c, bareTook)
	res.Warm.Throughput = append(res.Warm.Throughput, t)
	fmt.Fprintf(cfg.Progress, "e2e %s: concurrency %d: %d warm jobs in %.2fs (%.1f/s): %.2fx bare bun's time\n",
		res.Database, c, cfg.Jobs, t.Seconds, t.JobsPerSec, t.TimeRatio)
	if c != 1 {
		return nil
	}
	w := res.Warm
	w.WaitP50, w.WaitP99 = percentile(lvl.lat, 50), percentile(lvl.lat, 99)
	w.OverheadP50 = round3(w.WaitP50 - res.BareStartP50)
	w.Samples = len(lvl.lat)
	w.Breakdown, err = breakdown(ctx, s.api, lvl.trips)
	if err != nil {
		return fmt.Errorf("read the jobs' timestamps: %w", err)
	}
	return nil
}

// levelRun is one level's jobs: the wall time, each round trip, and the
// jobs with their round trips for the breakdown.
type levelRun struct {
	took  time.Duration
	lat   []time.Duration
	trips []trip
}

// level runs n jobs through one (greetWait or greetWarm), c at a time.
func level(ctx context.Context, n, c int, one func(context.Context) (time.Duration, string, error)) (levelRun, error) {
	var (
		mu sync.Mutex
		l  levelRun
	)
	took, lat, err := runConcurrently(ctx, n, c, func(ctx context.Context) (time.Duration, error) {
		d, id, err := one(ctx)
		mu.Lock()
		l.trips = append(l.trips, trip{id: id, took: d})
		mu.Unlock()
		return d, err
	})
	l.took, l.lat = took, lat
	return l, err
}

// throughput is the level's row against bare bun's time for the same
// number of spawns.
func (l levelRun) throughput(n, c int, bareTook time.Duration) E2EThroughput {
	return E2EThroughput{Concurrency: c, Seconds: round3(l.took.Seconds()), BareSeconds: round3(bareTook.Seconds()),
		JobsPerSec: perSec(n, l.took), BareJobsPerSec: perSec(n, bareTook), TimeRatio: ratio(l.took.Seconds(), bareTook.Seconds())}
}

func perSec(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return round1(float64(n) / d.Seconds())
}

// ratio is a/b to two decimals; 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return math.Round(a/b*100) / 100
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// WriteE2ETable prints rep for a reader: per database, the latency and
// throughput figures next to bare bun's, their ratio and the goal each
// is checked against (printed, never asserted).
func WriteE2ETable(w io.Writer, rep E2EReport) error {
	fmt.Fprintf(w, "\nend to end: trivial bun jobs (hello/greet) through the HTTP API, %d per row; worker concurrency %d; bun %s; %d CPUs\n",
		rep.Jobs, rep.WorkerConcurrency, rep.Bun, rep.CPUs)
	for _, r := range rep.Results {
		fmt.Fprintf(w, "\n%s\n", r.Database)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "\twindforce\tbare bun\tratio\t\n")
		fmt.Fprintf(tw, "?wait round trip p50 (ms)\t%.2f\t%.2f\t%.2fx\t\n", r.WaitP50, r.BareStartP50, r.WaitP50Ratio)
		fmt.Fprintf(tw, "?wait round trip p99 (ms)\t%.2f\t%.2f\t%.2fx\t\n", r.WaitP99, r.BareStartP99, r.WaitP99Ratio)
		for _, t := range r.Throughput {
			fmt.Fprintf(tw, "concurrency %d (jobs/s)\t%.1f\t%.1f\t%.2fx\t\n", t.Concurrency, t.JobsPerSec, t.BareJobsPerSec, t.TimeRatio)
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("e2e table: %w", err)
		}
		fmt.Fprintf(w, "per-job overhead p50: %.2f ms (goal <= 10 ms); throughput ratio is time over bare bun's time (goal <= 1.3x)\n", r.OverheadP50)
		fmt.Fprintf(w, "round trip p50s by the job's timestamps: queued %.2f ms, run %.2f ms, rest (HTTP, enqueue, wait answered) %.2f ms\n",
			r.Breakdown.QueuedP50, r.Breakdown.RunP50, r.Breakdown.RestP50)
		if r.Warm != nil {
			if err := writeWarmTable(w, r); err != nil {
				return err
			}
		}
	}
	for _, s := range rep.Skipped {
		fmt.Fprintf(w, "\n%s: skipped: %s\n", s.Database, s.Reason)
	}
	_, err := fmt.Fprintln(w)
	if err != nil {
		return fmt.Errorf("e2e table: %w", err)
	}
	return nil
}

// writeWarmTable prints a database's warm figures beside its cold ones
// and bare bun's, with issue 18's goals (printed, never asserted).
func writeWarmTable(w io.Writer, r E2EResult) error {
	m := r.Warm
	fmt.Fprintf(w, "\n%s, warm (%s/greet, warm: true) beside cold (hello/greet) and bare bun\n", r.Database, warmApp)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\twarm\tcold\tbare bun\twarm/bare\t\n")
	fmt.Fprintf(tw, "?wait round trip p50 (ms)\t%.2f\t%.2f\t%.2f\t%.2fx\t\n", m.WaitP50, r.WaitP50, r.BareStartP50, ratio(m.WaitP50, r.BareStartP50))
	fmt.Fprintf(tw, "?wait round trip p99 (ms)\t%.2f\t%.2f\t%.2f\t%.2fx\t\n", m.WaitP99, r.WaitP99, r.BareStartP99, ratio(m.WaitP99, r.BareStartP99))
	for i, t := range m.Throughput {
		cold := r.Throughput[i]
		fmt.Fprintf(tw, "concurrency %d (jobs/s)\t%.1f\t%.1f\t%.1f\t%.2fx\t\n", t.Concurrency, t.JobsPerSec, cold.JobsPerSec, t.BareJobsPerSec, t.TimeRatio)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("e2e table: %w", err)
	}
	fmt.Fprintf(w, "warm goals: ?wait p50 <= 3 ms (%.2f), p99 <= 10 ms (%.2f); warm round trip p50s: queued %.2f ms, run %.2f ms, rest %.2f ms\n",
		m.WaitP50, m.WaitP99, m.Breakdown.QueuedP50, m.Breakdown.RunP50, m.Breakdown.RestP50)
	if b := m.Burst; b != nil {
		fmt.Fprintf(w, "warm throughput: %d jobs, %d requests in flight: %.1f jobs/s (goal >= 1500/s on SQLite), round trip p50 %.2f ms, p99 %.2f ms; p50s: queued %.2f ms, run %.2f ms, rest %.2f ms\n",
			b.Jobs, b.Clients, b.JobsPerSec, b.P50, b.P99, b.Breakdown.QueuedP50, b.Breakdown.RunP50, b.Breakdown.RestP50)
	}
	mem := m.Memory
	_, err := fmt.Fprintf(w, "warm pool after the runs: %d bun processes, idle RSS p50 %.1f MiB (max %.1f); all %d processes below the worker %.1f MiB\n",
		mem.Processes, mem.IdleRSSP50MiB, mem.IdleRSSMaxMiB, mem.TreeProcesses, mem.PoolRSSMiB)
	if err != nil {
		return fmt.Errorf("e2e table: %w", err)
	}
	return nil
}
