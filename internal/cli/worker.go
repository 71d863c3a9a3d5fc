package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/windforce/windforce/metrics"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/runner"
	"github.com/windforce/windforce/server"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store"
)

// workerFlags is the configuration of `windforce worker`; every flag has
// its WINDFORCE_* variable (DESIGN §1).
type workerFlags struct {
	dbURL, objectCache, dir, tags, secret, url, name, metricsListen string
	metricsToken                                                    string
	concurrency                                                     int
	heartbeat, killGrace, drainGrace, cacheAge                      time.Duration
	maxResult, maxLog, cacheBytes                                   string
	sandbox                                                         *sandboxFlags
}

func parseWorkerFlags(args []string, stderr io.Writer) (*workerFlags, error) {
	f := &workerFlags{}
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.dbURL, "database-url", store.DefaultURL, "postgres://… or sqlite://PATH (WINDFORCE_DATABASE_URL)")
	fs.StringVar(&f.objectCache, "object-cache", objectcache.DefaultSpec, "file://DIR or postgres (WINDFORCE_OBJECT_CACHE)")
	fs.StringVar(&f.dir, "dir", "./.windforce", "local state: per-commit copies and job dirs (WINDFORCE_DIR)")
	fs.StringVar(&f.tags, "tags", spine.DefaultTag, "comma-separated routing tags (WINDFORCE_TAGS)")
	fs.IntVar(&f.concurrency, "concurrency", defaultConcurrency(), "jobs run at once; default 4 per CPU (WINDFORCE_CONCURRENCY)")
	fs.DurationVar(&f.heartbeat, "heartbeat", 5*time.Second, "heartbeat interval (WINDFORCE_HEARTBEAT)")
	fs.DurationVar(&f.killGrace, "kill-grace", runner.DefaultKillGrace, "SIGTERM → SIGKILL wait (WINDFORCE_KILL_GRACE)")
	fs.DurationVar(&f.drainGrace, "drain-grace", 30*time.Second, "on SIGTERM, how long running jobs may finish before they are released (WINDFORCE_DRAIN_GRACE)")
	fs.StringVar(&f.maxResult, "max-result-bytes", "1MiB", "largest result (WINDFORCE_MAX_RESULT_BYTES)")
	fs.StringVar(&f.maxLog, "max-log-bytes", "2MiB", "log cap per job (WINDFORCE_MAX_LOG_BYTES)")
	fs.StringVar(&f.cacheBytes, "commit-cache-bytes", "5GiB", "size of the per-commit copies kept; least recently used evicted beyond (WINDFORCE_COMMIT_CACHE_BYTES)")
	fs.DurationVar(&f.cacheAge, "commit-cache-age", runner.DefaultMaxCacheAge, "copies unused this long are evicted (WINDFORCE_COMMIT_CACHE_AGE)")
	fs.StringVar(&f.secret, "secret", "", "key that signs WF_TOKEN; prefer the variable (WINDFORCE_SECRET)")
	fs.StringVar(&f.url, "url", "http://127.0.0.1:8080", "API URL given to jobs (WINDFORCE_URL)")
	fs.StringVar(&f.metricsListen, "metrics-listen", "", "serve Prometheus /metrics on this address; empty = off (WINDFORCE_METRICS_LISTEN)")
	fs.StringVar(&f.metricsToken, "metrics-token", "", "bearer token /metrics requires; empty = open; prefer the variable (WINDFORCE_METRICS_TOKEN)")
	fs.StringVar(&f.name, "name", "", "worker name in job rows; default host-pid-random (WINDFORCE_WORKER_NAME)")
	f.sandbox = registerSandboxFlags(fs)
	if err := applyEnv(fs); err != nil {
		return nil, err
	}
	if err := fs.Parse(args); err != nil {
		return nil, &UsageError{Msg: err.Error()}
	}
	if f.secret == "" {
		return nil, &UsageError{Msg: "worker needs WINDFORCE_SECRET (the key the server verifies WF_TOKEN with)"}
	}
	if err := checkSecret("WINDFORCE_SECRET", f.secret); err != nil {
		return nil, err
	}
	if f.concurrency < 1 {
		return nil, &UsageError{Msg: "--concurrency must be at least 1"}
	}
	return f, nil
}

// RunWorker runs `windforce worker`: it claims jobs for its tags from the
// database, runs them from the object cache (never git), and on ctx's end
// (SIGTERM) stops claiming, lets running jobs finish within the drain
// grace and releases the rest to the queue without charging an attempt.
func RunWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseWorkerFlags(args, stderr)
	if err != nil {
		return err
	}
	cfg, err := f.runnerConfig()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	s, err := store.Open(ctx, f.dbURL, log)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := checkSchema(ctx, s); err != nil {
		return err
	}
	cache, err := objectcache.Open(f.objectCache, s)
	if err != nil {
		return err
	}
	m := metrics.New(metrics.Options{Health: s, Logger: log})
	w, closeRunner, sandboxLine, err := startWorker(ctx, f, cfg, s, cache, m, log)
	if err != nil {
		return err
	}
	defer closeRunner()
	if f.metricsListen != "" {
		stopMetrics, err := serveMetrics(f.metricsListen, f.metricsToken, m, log)
		if err != nil {
			w.Stop()
			return err
		}
		defer stopMetrics()
	}
	fmt.Fprintf(stdout, "worker %s serving tags %s with concurrency %d\n", w.Name(), f.tags, f.concurrency)
	fmt.Fprintf(stdout, "job sandbox %s\n", sandboxLine)
	<-ctx.Done()
	log.Info("stopping: no new claims; running jobs get the drain grace", "grace", f.drainGrace)
	w.Stop()
	return nil
}

// startWorker builds the script runner over s and cache and starts a
// worker with it. Stop the worker, then call closeRunner. sandbox
// describes the job sandbox, for the start line and /readyz.
func startWorker(ctx context.Context, f *workerFlags, cfg runner.Config, s spine.Store, cache objectcache.Cache, m *metrics.Metrics, log *slog.Logger) (w *spine.Worker, closeRunner func(), sandbox string, err error) {
	cfg.Store, cfg.Cache, cfg.Logger = s, cache, log
	r, err := runner.New(cfg)
	if err != nil {
		return nil, nil, "", err
	}
	sandbox = r.Sandbox().Describe()
	if !r.Sandbox().Enabled() {
		log.Warn("the job sandbox is OFF (--sandbox=off): jobs run as the worker's user and can read its files, environment and database")
	}
	w, err = spine.NewWorker(spine.WorkerConfig{Store: s, Handler: m.Instrument(r.Handle), Name: f.name,
		Tags: splitTags(f.tags), Concurrency: f.concurrency, Heartbeat: f.heartbeat, DrainGrace: f.drainGrace, Logger: log})
	if err == nil {
		err = w.Start(context.WithoutCancel(ctx))
	}
	if err != nil {
		r.Close()
		return nil, nil, "", fmt.Errorf("start worker: %w", err)
	}
	return w, r.Close, sandbox, nil
}

func (f *workerFlags) runnerConfig() (runner.Config, error) {
	maxResult, err1 := parseSize(f.maxResult)
	maxLog, err2 := parseSize(f.maxLog)
	cacheBytes, err3 := parseSize(f.cacheBytes)
	if err := errors.Join(err1, err2, err3); err != nil {
		return runner.Config{}, &UsageError{Msg: err.Error()}
	}
	sb, err := f.sandbox.config(localDirs(f.dbURL, f.objectCache)...)
	if err != nil {
		return runner.Config{}, err
	}
	return runner.Config{Dir: f.dir, KillGrace: f.killGrace, MaxResultBytes: maxResult, MaxLogBytes: maxLog,
		Secret: []byte(f.secret), URL: f.url, MaxCacheBytes: cacheBytes, MaxCacheAge: f.cacheAge, Sandbox: sb}, nil
}

// serveMetrics serves m on addr at /metrics (behind token when set) until
// the returned function is called.
func serveMetrics(addr, token string, m *metrics.Metrics, log *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", server.MetricsAuth(token, m.Handler()))
	srv, wrap := server.NewHTTPServer(mux, server.HTTPConfig{MaxConns: metricsConns, Logger: log})
	go func() { _ = srv.Serve(wrap(ln)) }()
	return func() { _ = srv.Close() }, nil
}

// metricsConns bounds a worker's /metrics connections: scrapers are few.
const metricsConns = 64

// checkSchema refuses a database whose migrations are behind: workers do
// not migrate (`windforce migrate` or the server does).
func checkSchema(ctx context.Context, s store.Store) error {
	current, latest, err := s.SchemaVersion(ctx)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if current < latest {
		return fmt.Errorf("database schema at version %d of %d: run windforce migrate first", current, latest)
	}
	return nil
}

func splitTags(s string) []string {
	var tags []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	return tags
}

// applyEnv sets every flag whose WINDFORCE_* variable (named in its usage
// text) is set, so flags given on the command line still win and a
// malformed variable is reported by name.
func applyEnv(fs *flag.FlagSet) error {
	var err error
	fs.VisitAll(func(fl *flag.Flag) {
		open := strings.LastIndex(fl.Usage, "(WINDFORCE_")
		if open < 0 || err != nil {
			return
		}
		name := strings.TrimSuffix(fl.Usage[open+1:], ")")
		if v := env(name, ""); v != "" {
			if e := fs.Set(fl.Name, v); e != nil {
				err = &UsageError{Msg: fmt.Sprintf("%s=%q: %v", name, v, e)}
			}
		}
	})
	return err
}
