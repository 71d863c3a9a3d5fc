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
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/console"
	"github.com/windforce/windforce/metrics"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/server"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store"
)

// serverFlags is the configuration of `windforce server`; every flag has
// its WINDFORCE_* variable (DESIGN §1).
type serverFlags struct {
	listen, dbURL, objectCache, secret, adminToken, maxInput        string
	fileSources                                                     string
	syncInterval, retention, zombieTimeout, reaperInterval, maxWait time.Duration
	restartLimit                                                    int
	limits                                                          apiLimits
}

func parseServerFlags(args []string, stderr io.Writer) (*serverFlags, error) {
	f := &serverFlags{}
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.listen, "listen", "127.0.0.1:8080", "HTTP address (WINDFORCE_LISTEN)")
	fs.StringVar(&f.dbURL, "database-url", store.DefaultURL, "postgres://… or sqlite://PATH (WINDFORCE_DATABASE_URL)")
	fs.StringVar(&f.objectCache, "object-cache", objectcache.DefaultSpec, "file://DIR or postgres (WINDFORCE_OBJECT_CACHE)")
	fs.StringVar(&f.secret, "secret", "", "key that verifies WF_TOKEN; prefer the variable (WINDFORCE_SECRET)")
	fs.StringVar(&f.adminToken, "admin-token", "", "bootstrap admin token, every workspace; prefer the variable (WINDFORCE_ADMIN_TOKEN)")
	fs.StringVar(&f.maxInput, "max-input-bytes", "1MiB", "largest request body (WINDFORCE_MAX_INPUT_BYTES)")
	fs.DurationVar(&f.syncInterval, "sync-interval", 60*time.Second, "periodic poll of git sources, 0 = off (WINDFORCE_SYNC_INTERVAL)")
	fs.DurationVar(&f.retention, "retention", 168*time.Hour, "how long finished jobs are kept (WINDFORCE_RETENTION)")
	fs.DurationVar(&f.zombieTimeout, "zombie-timeout", 60*time.Second, "a running job without a heartbeat this long is reaped (WINDFORCE_ZOMBIE_TIMEOUT)")
	fs.DurationVar(&f.reaperInterval, "reaper-interval", 15*time.Second, "reaper pass interval (WINDFORCE_REAPER_INTERVAL)")
	fs.IntVar(&f.restartLimit, "restart-limit", 3, "restarts of a job whose worker died before it fails (WINDFORCE_RESTART_LIMIT)")
	fs.DurationVar(&f.maxWait, "max-wait", server.DefaultMaxWait, "longest ?wait= on run (WINDFORCE_MAX_WAIT)")
	fs.StringVar(&f.fileSources, "file-sources", "", "folders whose git repositories file:// sources may name, : or , separated; empty = none (WINDFORCE_FILE_SOURCES)")
	addAPILimitFlags(fs, &f.limits)
	if err := applyEnv(fs); err != nil {
		return nil, err
	}
	if err := fs.Parse(args); err != nil {
		return nil, &UsageError{Msg: err.Error()}
	}
	if f.restartLimit < 0 || f.zombieTimeout <= 0 || f.reaperInterval <= 0 || f.retention <= 0 {
		return nil, &UsageError{Msg: "--zombie-timeout, --reaper-interval and --retention must be positive, --restart-limit at least 0"}
	}
	if err := f.limits.check(); err != nil {
		return nil, err
	}
	if err := source.CheckFileSources(source.SplitFileSources(f.fileSources)); err != nil {
		return nil, &UsageError{Msg: err.Error()}
	}
	for _, sec := range []struct{ name, v string }{{"WINDFORCE_SECRET", f.secret}, {"WINDFORCE_ADMIN_TOKEN", f.adminToken}} {
		if err := checkSecret(sec.name, sec.v); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// RunServer runs `windforce server`: it migrates the database, starts the
// reaper, the retention sweeper and the source poller, and serves the HTTP
// API until ctx ends, then shuts down gracefully (in-flight requests get
// a few seconds, then the services stop).
func RunServer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseServerFlags(args, stderr)
	if err != nil {
		return err
	}
	maxInput, err := parseSize(f.maxInput)
	if err != nil {
		return &UsageError{Msg: err.Error()}
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	p, err := openAPIStore(ctx, f.dbURL, f.objectCache, f.zombieTimeout, log)
	if err != nil {
		return err
	}
	defer p.store.Close()
	p.syncer.FileSources = source.SplitFileSources(f.fileSources)
	con, err := newConsole(p, f.secret, f.adminToken, maxInput, log)
	if err != nil {
		return err
	}
	cfg := server.Config{Store: p.store, Syncer: p.syncer, Metrics: p.metrics, Console: con, Secret: []byte(f.secret),
		AdminToken: f.adminToken, MaxInputBytes: maxInput, MaxWait: f.maxWait, Logger: log}
	f.limits.apply(&cfg)
	api, err := server.New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", f.listen, err)
	}
	stop, err := startServices(context.WithoutCancel(ctx), f, p, log)
	if err != nil {
		_ = ln.Close()
		return err
	}
	defer stop()
	return serve(ctx, ln, api.Handler(), f.limits.maxConns, stdout, log, nil)
}

// apiParts are what a server process is built from: the store, the
// syncer over its object cache, and the process's metrics.
type apiParts struct {
	store   server.Store
	syncer  *source.Syncer
	metrics *metrics.Metrics
}

// openAPIStore opens the database the API serves, migrates it, records
// the zombie timeout for queue health, and opens the object cache and the
// syncer over it. The caller closes the store.
func openAPIStore(ctx context.Context, dbURL, objectCache string, zombieTimeout time.Duration, log *slog.Logger) (*apiParts, error) {
	opened, err := store.Open(ctx, dbURL, log)
	if err != nil {
		return nil, err
	}
	s, ok := opened.(server.Store)
	if !ok {
		opened.Close()
		return nil, fmt.Errorf("store for %s does not serve the API (no catalog or token store)", dbURL)
	}
	fail := func(err error) (*apiParts, error) {
		s.Close()
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		return fail(fmt.Errorf("migrate: %w", err))
	}
	if err := s.SetZombieTimeout(ctx, zombieTimeout); err != nil {
		return fail(fmt.Errorf("record zombie timeout: %w", err))
	}
	cache, err := objectcache.Open(objectCache, s)
	if err != nil {
		return fail(fmt.Errorf("open object cache: %w", err))
	}
	m := metrics.New(metrics.Options{Health: s, Logger: log})
	syncer := &source.Syncer{Catalog: s, Cache: cache, Logger: log, OnSync: m.SyncDone}
	return &apiParts{store: s, syncer: syncer, metrics: m}, nil
}

// newConsole builds the web console over p; without a secret to sign
// sessions with there is none (nil), and the server says so.
func newConsole(p *apiParts, secret, adminToken string, maxInput int64, log *slog.Logger) (http.Handler, error) {
	if secret == "" {
		log.Warn("no WINDFORCE_SECRET: the web console is off (it signs sessions with the secret)")
		return nil, nil
	}
	con, err := console.New(console.Config{Store: p.store, Syncer: p.syncer, Secret: []byte(secret),
		AdminToken: adminToken, MaxInputBytes: maxInput, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	return con.Handler(), nil
}

// startServices starts the reaper, the sweeper, the source poller and the
// scheduler; the returned function stops them all and waits.
func startServices(ctx context.Context, f *serverFlags, p *apiParts, log *slog.Logger) (func(), error) {
	reaper := &spine.Reaper{Store: p.store, Interval: f.reaperInterval, ZombieTimeout: f.zombieTimeout,
		RestartLimit: f.restartLimit, Logger: log, OnReap: p.metrics.Reaped}
	sweeper := &spine.Sweeper{Store: p.store, Retention: f.retention, Logger: log}
	poller := &source.Poller{Syncer: p.syncer, Interval: f.syncInterval, Logger: log}
	scheduler := &schedule.Scheduler{Store: p.store, Logger: log, OnPass: func(r schedule.PassResult) {
		for _, fired := range r.Fired {
			if fired.Job != uuid.Nil {
				p.metrics.JobEnqueued(spine.TriggerSchedule, fired.Workspace)
			}
		}
	}}
	var stops []func()
	stopAll := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	for _, svc := range []struct {
		name  string
		start func(context.Context) error
		stop  func()
	}{{"reaper", reaper.Start, reaper.Stop}, {"sweeper", sweeper.Start, sweeper.Stop},
		{"source poller", poller.Start, poller.Stop}, {"scheduler", scheduler.Start, scheduler.Stop}} {
		if err := svc.start(ctx); err != nil {
			stopAll()
			return nil, fmt.Errorf("start %s: %w", svc.name, err)
		}
		stops = append(stops, svc.stop)
	}
	return stopAll, nil
}

// serve serves h on ln until ctx ends, then shuts down: no new
// connections, in-flight requests get shutdownGrace. Connections are
// bounded to maxConns (0: from the open-file limit, raised first).
//
// beforeShutdown, when set, runs once ctx has ended and before the HTTP
// server stops: dev stops its worker there, so jobs finishing during the
// drain can still reach the API (child enqueues, their own job).
func serve(ctx context.Context, ln net.Listener, h http.Handler, maxConns int, stdout io.Writer, log *slog.Logger, beforeShutdown func()) error {
	// Request contexts end when shutdown starts, so ?wait long-polls answer
	// 202 at once instead of holding the shutdown.
	base, endRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer endRequests()
	srv, wrap := httpServer(h, maxConns, log)
	srv.BaseContext = baseContextOf(base)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(wrap(ln)) }()
	fmt.Fprintf(stdout, "windforce server listening on http://%s\n", ln.Addr())
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	if beforeShutdown != nil {
		beforeShutdown()
	}
	log.Info("shutting down: draining in-flight requests", "grace", shutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	endRequests()
	err := srv.Shutdown(sctx)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) && serr != nil {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("shut down: %w", err)
	}
	return nil
}

// shutdownGrace is how long in-flight requests (a ?wait long-poll) may
// finish after the server is asked to stop.
const shutdownGrace = 10 * time.Second
