package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/windforce/windforce/console"
	"github.com/windforce/windforce/events/relay"
	"github.com/windforce/windforce/metrics"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/server"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store"
)

// parseServerFlags reads the settings of `windforce server` from the
// environment and args and checks them.
func parseServerFlags(args []string, stderr io.Writer) (*config, error) {
	f := &config{}
	fs := newFlagSet("server", stderr)
	fs.bind(cmdServer, f)
	if err := fs.parse(args); err != nil {
		return nil, err
	}
	if err := f.checkAPI(); err != nil {
		return nil, err
	}
	if err := source.CheckFileSources(source.SplitFileSources(f.fileSources)); err != nil {
		return nil, &UsageError{Msg: err.Error()}
	}
	if err := checkSecrets(secret{"WINDFORCE_SECRET", f.secret}, secret{"WINDFORCE_ADMIN_TOKEN", f.adminToken},
		secret{"WINDFORCE_METRICS_TOKEN", f.metricsToken}); err != nil {
		return nil, err
	}
	return f, nil
}

// checkAPI refuses the API and service settings of server and dev that
// make no sense.
func (f *config) checkAPI() error {
	if f.restartLimit < 0 || f.zombieTimeout <= 0 || f.reaperInterval <= 0 || f.retention <= 0 {
		return &UsageError{Msg: "--zombie-timeout, --reaper-interval and --retention must be positive, --restart-limit at least 0"}
	}
	if err := f.checkSecretsKey(); err != nil {
		return err
	}
	return f.limits.check()
}

// apiConfig is the configuration of the API f describes over p; the
// caller adds what only it knows (dev: the job sandbox line).
func (f *config) apiConfig(p *apiParts, con http.Handler, log *slog.Logger) server.Config {
	cfg := server.Config{Store: p.store, Syncer: p.syncer, Metrics: p.metrics, Console: con, Secret: []byte(f.secret),
		AdminToken: f.adminToken, MaxInputBytes: int64(f.maxInput), MaxWait: f.maxWait, MetricsToken: f.metricsToken, Logger: log}
	f.limits.apply(&cfg)
	cfg.SecretsKey, _ = f.secretsKeyOf() // checked by checkAPI; none answers 503 to a PUT
	return cfg
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
	log := slog.New(slog.NewTextHandler(stderr, nil))
	p, err := openAPIStore(ctx, f.dbURL, f.objectCache, f.zombieTimeout, log)
	if err != nil {
		return err
	}
	defer p.store.Close()
	p.syncer.FileSources = source.SplitFileSources(f.fileSources)
	con, err := newConsole(p, f, log)
	if err != nil {
		return err
	}
	api, err := server.New(f.apiConfig(p, con, log))
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
	store   apiStore
	relay   relay.Store
	syncer  *source.Syncer
	metrics *metrics.Metrics
}

// openAPIStore opens the database the API serves, migrates it, records
// the zombie timeout for queue health, and opens the object cache and the
// syncer over it. The caller closes the store.
func openAPIStore(ctx context.Context, dbURL, objectCache string, zombieTimeout time.Duration, log *slog.Logger) (*apiParts, error) {
	s, err := store.Open(ctx, dbURL, log)
	if err != nil {
		return nil, err
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
	return &apiParts{store: s, relay: s, syncer: syncer, metrics: m}, nil
}

// newConsole builds the web console over p; without a secret to sign
// sessions with there is none (nil), and the server says so.
func newConsole(p *apiParts, f *config, log *slog.Logger) (http.Handler, error) {
	if f.secret == "" {
		log.Warn("no WINDFORCE_SECRET: the web console is off (it signs sessions with the secret)")
		return nil, nil
	}
	key, _ := f.secretsKeyOf() // checked by checkAPI
	con, err := console.New(console.Config{Store: p.store, Syncer: p.syncer, Secret: []byte(f.secret), SecretsKey: key,
		AdminToken: f.adminToken, MaxInputBytes: int64(f.maxInput), Logger: log, Metrics: p.metrics})
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	return con.Handler(), nil
}

// startServices starts the reaper, the sweeper, the source poller, the
// scheduler and the event relay; the returned function stops them all and waits.
func startServices(ctx context.Context, f *config, p *apiParts, log *slog.Logger) (func(), error) {
	reaper := &spine.Reaper{Store: p.store, Interval: f.reaperInterval, ZombieTimeout: f.zombieTimeout,
		RestartLimit: f.restartLimit, Logger: log, OnReap: p.metrics.Reaped}
	sweeper := &spine.Sweeper{Store: p.store, Retention: f.retention, Logger: log}
	poller := &source.Poller{Syncer: p.syncer, Interval: f.syncInterval, Logger: log}
	scheduler := &schedule.Scheduler{Store: p.store, Logger: log, OnPass: p.metrics.SchedulePass}
	relayer := f.relay.relay(p.relay, log)
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
		{"source poller", poller.Start, poller.Stop}, {"scheduler", scheduler.Start, scheduler.Stop},
		{"event relay", relayer.Start, relayer.Stop}} {
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
	srv.BaseContext = func(net.Listener) context.Context { return base }
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
