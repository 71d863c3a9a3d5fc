package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/metrics"
	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/secrets"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/spine"
)

// Store is what the API needs of the database: the spine, the catalog,
// API tokens, and the schema version for readiness. The store core (package store)
// implements it.
type Store interface {
	spine.Store
	spine.Lister
	catalog.Store
	catalog.Requeuer
	auth.Store
	WebhookStore
	schedule.Store
	sink.Store
	EventStore
	secrets.Store
	SchemaVersion(ctx context.Context) (current, latest int, err error)
}

// Defaults of Config.
const (
	DefaultMaxInputBytes = 1 << 20
	DefaultMaxWait       = 5 * time.Minute
	DefaultWaitPoll      = time.Second
	DefaultFollowPoll    = 200 * time.Millisecond
)

// Config is what a Server is built from.
type Config struct {
	Store Store
	// Syncer syncs sources into the object cache and the catalog (Store).
	Syncer *source.Syncer
	// Secret verifies WF_TOKEN (WINDFORCE_SECRET); empty refuses every job token.
	Secret []byte
	// SecretsKey seals the secrets admins set (secrets.KeyFromConfig);
	// the zero Key answers 503 to a PUT of a secret.
	SecretsKey secrets.Key
	// AdminToken is the bootstrap admin token (WINDFORCE_ADMIN_TOKEN),
	// valid in every workspace with every scope; empty disables it.
	AdminToken string
	// MaxInputBytes bounds request bodies (WINDFORCE_MAX_INPUT_BYTES).
	MaxInputBytes int64
	// Sandbox describes the job sandbox of the worker in this process
	// ("on: …" or "off: …"), shown by /readyz; empty without a worker.
	Sandbox string
	// Warm describes that worker's warm runtime processes (DESIGN §7)
	// for /readyz; nil without a worker.
	Warm func() any
	// MaxWait bounds ?wait= on run.
	MaxWait time.Duration
	// WaitPoll is how often ?wait re-reads a job it has not been woken
	// for. Waits are woken by the job's completion (Store's
	// SubscribeCompletion); this slow poll is only the fallback for a
	// wake-up that got lost. Zero means DefaultWaitPoll.
	WaitPoll time.Duration
	// FollowPoll is how often logs ?follow=1 reads a live job's new
	// output, at first and after output; a quiet job is read less and
	// less often, down to every 10 × FollowPoll, which is also the
	// fallback for the job's end (the stream is woken by the completion
	// itself). Zero means DefaultFollowPoll.
	FollowPoll time.Duration
	// Clock is the time for token expiry, webhook timestamps and schedule
	// ticks (spine.Clock: Wall, nil is time.Now).
	Clock  spine.Clock
	Logger *slog.Logger
	// Metrics counts enqueues and is served on GET /metrics; nil builds
	// one over Store (queue gauges only, no worker figures).
	Metrics *metrics.Metrics
	// MaxWaiters bounds the ?wait requests one token (or job) holds open
	// in this process (WINDFORCE_MAX_WAITERS_PER_TOKEN); zero means
	// DefaultMaxWaiters.
	MaxWaiters int
	// MaxFollowers bounds the logs ?follow=1 streams one token (or job)
	// holds open in this process (WINDFORCE_MAX_FOLLOWERS_PER_TOKEN);
	// zero means DefaultMaxFollowers.
	MaxFollowers int
	// MaxChildDepth bounds how deep child jobs nest
	// (WINDFORCE_MAX_CHILD_DEPTH); zero means DefaultMaxChildDepth.
	MaxChildDepth int
	// MetricsToken, when set, is required as the bearer token of GET
	// /metrics (WINDFORCE_METRICS_TOKEN); empty serves it to anyone.
	MetricsToken string
	// Console is the web console (package console), mounted at "/"; the
	// API's own routes (/api/, /healthz, /readyz, /metrics) are more
	// specific patterns and keep precedence. nil serves no console.
	Console http.Handler
}

// Server is the HTTP API. Build it with New and serve Handler().
type Server struct {
	cfg Config
	log *slog.Logger
	mux *http.ServeMux
	// waiters and followers count each caller's open ?wait requests and
	// log streams (Config.MaxWaiters, MaxFollowers).
	waiters, followers openCounter
	// enq is the one enqueue path with its counting: every handler that
	// enqueues goes through it.
	enq *catalog.Enqueuer
	// actions is each route's action (its scope is auth.Need of it).
	actions map[string]auth.Action
}

// New builds a server over cfg.Store.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Syncer == nil {
		return nil, errors.New("server: Config.Store and Config.Syncer are required")
	}
	if cfg.MaxInputBytes <= 0 {
		cfg.MaxInputBytes = DefaultMaxInputBytes
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = DefaultMaxWait
	}
	if cfg.WaitPoll <= 0 {
		cfg.WaitPoll = DefaultWaitPoll
	}
	if cfg.FollowPoll <= 0 {
		cfg.FollowPoll = DefaultFollowPoll
	}
	cfg.MaxWaiters = orDefault(cfg.MaxWaiters, DefaultMaxWaiters)
	cfg.MaxFollowers = orDefault(cfg.MaxFollowers, DefaultMaxFollowers)
	cfg.MaxChildDepth = orDefault(cfg.MaxChildDepth, DefaultMaxChildDepth)
	s := &Server{cfg: cfg, log: cfg.Logger, mux: http.NewServeMux(), actions: map[string]auth.Action{}}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.cfg.Metrics == nil {
		s.cfg.Metrics = metrics.New(metrics.Options{Health: cfg.Store, Logger: s.log})
	}
	s.enq = &catalog.Enqueuer{Store: cfg.Store, Count: s.cfg.Metrics.JobEnqueued}
	s.routes()
	return s, nil
}

// orDefault is v, or def when v is not positive.
func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// Handler is the API's http.Handler.
func (s *Server) Handler() http.Handler { return s.mux }

func (s *Server) now() time.Time {
	return s.cfg.Clock.Wall()
}

// routes registers DESIGN §4's routes of this slice. Each names the
// action it is (auth.Need gives the scope), as the console's pages do.
func (s *Server) routes() {
	on := func(a auth.Action) route { return route{action: a} }
	read := route{action: auth.ActionRead}
	self := route{action: auth.ActionRead, job: jobSelf}
	const w = "/api/w/{ws}"
	s.api("POST "+w+"/jobs/run/{app}/{action}", route{action: auth.ActionRun, job: jobChild}, s.runJob)
	s.api("GET "+w+"/jobs/{id}", self, s.getJob)
	s.api("GET "+w+"/jobs/{id}/result", self, s.getResult)
	s.api("GET "+w+"/jobs/{id}/logs", self, s.getLogs)
	s.api("GET "+w+"/jobs/{id}/superseded", self, s.getSuperseded)
	s.api("POST "+w+"/jobs/{id}/cancel", on(auth.ActionCancel), s.cancelJob)
	s.api("POST "+w+"/jobs/{id}/reopen", on(auth.ActionReopen), s.reopenJob)
	s.api("GET "+w+"/jobs", read, s.listJobs)
	s.api("POST "+w+"/jobs/{id}/requeue", on(auth.ActionRequeue), s.requeueJob)
	s.api("POST "+w+"/jobs/requeue", on(auth.ActionRequeue), s.requeueJobs)
	s.api("POST "+w+"/apps/{app}/deploy", on(auth.ActionDeploy), s.deployApp)
	s.api("GET "+w+"/sources", read, s.listSources)
	s.api("POST "+w+"/sources", on(auth.ActionAddSource), s.addSource)
	s.api("POST "+w+"/sources/{id}/sync", on(auth.ActionSyncSource), s.syncSource)
	// A push hook authenticates itself (token or a git host's signature).
	s.mux.HandleFunc("POST "+w+"/sources/{id}/hook", s.serveHook)
	s.mark("POST "+w+"/sources/{id}/hook", hookRoute)
	s.api("PUT "+w+"/sources/{id}/hook-secret", on(auth.ActionAddSource), s.putHookSecret)
	s.api("GET "+w+"/apps", read, s.listApps)
	s.api("GET "+w+"/apps/{app}", read, s.getApp)
	s.api("GET "+w+"/queue/health", read, s.queueHealth)
	s.api("GET "+w+"/schedules", read, s.listSchedules)
	s.api("GET "+w+"/schedules/preview", read, s.previewSchedule)
	s.api("GET "+w+"/schedules/{id}", read, s.getSchedule)
	s.api("POST "+w+"/schedules", on(auth.ActionCreateSchedule), s.createSchedule)
	s.api("PATCH "+w+"/schedules/{id}", on(auth.ActionEditSchedule), s.patchSchedule)
	s.api("DELETE "+w+"/schedules/{id}", on(auth.ActionDeleteSchedule), s.deleteSchedule)
	// A webhook authenticates itself (token or HMAC signature).
	s.mux.HandleFunc("POST "+w+"/webhooks/{app}/{action}", s.serveWebhook)
	s.mark("POST "+w+"/webhooks/{app}/{action}", webhookRoute)
	s.api("POST "+w+"/webhooks/{app}/{action}/secret", on(auth.ActionWebhookSecret), s.putWebhookSecret)
	s.api("GET "+w+"/event-sinks", read, s.listSinks)
	s.api("GET "+w+"/event-sinks/{id}", read, s.getSink)
	s.api("POST "+w+"/event-sinks", on(auth.ActionManageSinks), s.createSink)
	s.api("PATCH "+w+"/event-sinks/{id}", on(auth.ActionManageSinks), s.patchSink)
	s.api("DELETE "+w+"/event-sinks/{id}", on(auth.ActionManageSinks), s.deleteSink)
	s.api("GET "+w+"/event-sinks/{id}/deliveries", read, s.listDeliveries)
	s.api("GET "+w+"/events", read, s.listEvents)
	s.api("GET "+w+"/secrets", read, s.listSecrets)
	s.api("GET "+w+"/secrets/audit", on(auth.ActionSecretAudit), s.secretAudit)
	s.api("PUT "+w+"/secrets/{name}", on(auth.ActionSetSecret), s.putSecret)
	s.api("DELETE "+w+"/secrets/{name}", on(auth.ActionDeleteSecret), s.deleteSecret)
	// Token creation checks the requested workspace itself.
	s.api("POST /api/tokens", route{global: true, job: jobNone}, s.createToken)
	s.api("DELETE /api/tokens/{id}", route{action: auth.ActionRevokeToken, global: true}, s.revokeToken)
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		s.respond(w, r, map[string]string{"status": "ok"}, nil)
	})
	s.mux.Handle("GET /metrics", MetricsAuth(s.cfg.MetricsToken, s.cfg.Metrics.Handler()))
	s.mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		v, err := s.ready(r)
		s.respond(w, r, v, err)
	})
	s.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		s.respond(w, r, nil, errorf(http.StatusNotFound, CodeNotFound, "no route %s %s", r.Method, r.URL.Path))
	})
	if s.cfg.Console != nil {
		s.mux.Handle("/", s.cfg.Console)
	}
}

// api registers h behind authentication and rt's checks.
func (s *Server) api(pattern string, rt route, h handlerFunc) {
	s.mark(pattern, rt)
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		c, err := s.authenticate(r)
		if err == nil {
			err = s.authorize(r, c, rt)
		}
		if err != nil {
			s.respond(w, r, nil, err)
			return
		}
		v, err := h(w, r, c)
		s.respond(w, r, v, err)
	})
}

// mark records the action of pattern, for the test that the console's
// pages need the scopes of the API routes they mirror.
func (s *Server) mark(pattern string, rt route) {
	if rt.action != "" {
		s.actions[pattern] = rt.action
	}
}

// ready answers /readyz: the database answers and its migrations are
// current; 503 otherwise.
func (s *Server) ready(r *http.Request) (any, error) {
	current, latest, err := s.cfg.Store.SchemaVersion(r.Context())
	if err != nil {
		return nil, &Error{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, Message: "database unreachable", Err: err}
	}
	if current != latest {
		return nil, &Error{Status: http.StatusServiceUnavailable, Code: CodeUnavailable,
			Message: "database migrations are not current", Details: map[string]any{"current": current, "latest": latest}}
	}
	v := map[string]any{"status": "ready", "schema_version": current}
	if s.cfg.Sandbox != "" {
		v["sandbox"] = s.cfg.Sandbox
	}
	if s.cfg.Warm != nil {
		v["warm"] = s.cfg.Warm()
	}
	return v, nil
}
