package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/windforce/windforce/metrics"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/runner"
	"github.com/windforce/windforce/server"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store"
)

// parseWorkerFlags reads the settings of `windforce worker` from the
// environment and args and checks them.
func parseWorkerFlags(args []string, stderr io.Writer) (*config, error) {
	f := &config{}
	fs := newFlagSet("worker", stderr)
	fs.bind(cmdWorker, f)
	if err := fs.parse(args); err != nil {
		return nil, err
	}
	if f.secret == "" {
		return nil, &UsageError{Msg: "worker needs WINDFORCE_SECRET (the key the server verifies WF_TOKEN with)"}
	}
	if err := checkSecrets(secret{"WINDFORCE_SECRET", f.secret}, secret{"WINDFORCE_METRICS_TOKEN", f.metricsToken}); err != nil {
		return nil, err
	}
	if err := f.checkConcurrency(); err != nil {
		return nil, err
	}
	return f, nil
}

// checkConcurrency refuses a worker (or dev) that would run no job.
func (f *config) checkConcurrency() error {
	if f.concurrency < 1 {
		return &UsageError{Msg: "--concurrency must be at least 1"}
	}
	return nil
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
	w, r, err := startWorker(ctx, f, cfg, s, cache, m, log)
	if err != nil {
		return err
	}
	defer r.Close()
	if f.metricsListen != "" {
		stopMetrics, err := serveMetrics(f.metricsListen, f.metricsToken, m, log)
		if err != nil {
			w.Stop()
			return err
		}
		defer stopMetrics()
	}
	fmt.Fprintf(stdout, "worker %s serving tags %s with concurrency %d\n", w.Name(), f.tags, f.concurrency)
	fmt.Fprintf(stdout, "job sandbox %s\n", r.Sandbox().Describe())
	fmt.Fprintln(stdout, warmLine(r))
	<-ctx.Done()
	log.Info("stopping: no new claims; running jobs get the drain grace", "grace", f.drainGrace)
	w.Stop()
	return nil
}

// startWorker builds the script runner over s and cache and starts a
// worker with it. Stop the worker, then close the runner (its sandbox and
// warm pool are for the start line and /readyz).
func startWorker(ctx context.Context, f *config, cfg runner.Config, s workerStore, cache objectcache.Cache, m *metrics.Metrics, log *slog.Logger) (w *spine.Worker, r *runner.Runner, err error) {
	cfg.Store, cfg.Secrets, cfg.Catalog, cfg.Cache, cfg.Logger = s, s, s, cache, log
	cfg.WarmProcesses = f.concurrency // the warm pool follows the worker's slots
	r, err = runner.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	watchWarm(m, r)
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
		return nil, nil, fmt.Errorf("start worker: %w", err)
	}
	return w, r, nil
}

// runnerConfig is the script runner's configuration f describes; the
// caller adds the store, the cache and the logger.
func (f *config) runnerConfig() (runner.Config, error) {
	sb, err := f.sandbox.config(localDirs(f.dbURL, f.objectCache)...)
	if err != nil {
		return runner.Config{}, err
	}
	if err := f.checkSecretsKey(); err != nil {
		return runner.Config{}, err
	}
	// The key the server seals with: WINDFORCE_SECRETS_KEY, else derived
	// from WINDFORCE_SECRET (the runner derives the same when zero).
	key, _ := f.secretsKeyOf()
	return runner.Config{Dir: f.dir, KillGrace: f.killGrace, MaxResultBytes: int64(f.maxResult), MaxLogBytes: int64(f.maxLog),
		Secret: []byte(f.secret), SecretsKey: key, URL: f.url, MaxCacheBytes: int64(f.cacheBytes), MaxCacheAge: f.cacheAge, Sandbox: sb}, nil
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
func checkSchema(ctx context.Context, s *store.Store) error {
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
