package console

import (
	"crypto/subtle"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"time"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/metrics"
	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/secrets"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/spine"
)

// Store is what the console reads and writes: the spine (jobs, logs,
// audit, health), job listings, the catalog (sources, apps, the one
// enqueue path), API tokens and schedules. The store core (package store) implements it.
type Store interface {
	spine.Store
	spine.Lister
	catalog.Store
	catalog.Requeuer
	auth.Store
	schedule.Store
	EventStore
	secrets.Store
}

// Config is what a Console is built from.
type Config struct {
	Store Store
	// Syncer runs "Sync now" on the sources page.
	Syncer *source.Syncer
	// Secret signs session cookies (WINDFORCE_SECRET). Required.
	Secret []byte
	// SecretsKey seals the secrets set on the Secrets page
	// (secrets.KeyFromConfig); the zero Key refuses to set one.
	SecretsKey secrets.Key
	// AdminToken is the bootstrap admin token; a login with it is an
	// all-workspace admin. Empty disables it.
	AdminToken string
	// MaxInputBytes bounds a run's input as the API does
	// (WINDFORCE_MAX_INPUT_BYTES); default 1 MiB.
	MaxInputBytes int64
	// SessionTTL bounds a session; default 12h.
	SessionTTL time.Duration
	// LiveHold is how long the job page's live status block waits for
	// the job's completion before it answers anyway (and asks again);
	// default 2s. The completion answers it at once.
	LiveHold time.Duration
	// Clock is the time for sessions and schedule previews (spine.Clock:
	// Wall, nil is time.Now).
	Clock  spine.Clock
	Logger *slog.Logger
	// Metrics counts the console's enqueues (run, run again) in
	// windforce_jobs_enqueued_total; pass the server's so GET /metrics
	// shows them. nil counts nothing.
	Metrics *metrics.Metrics
}

// DefaultMaxInputBytes is the input limit when Config.MaxInputBytes is 0,
// the API's default.
const DefaultMaxInputBytes = 1 << 20

// DefaultLiveHold is Config.LiveHold's default: a running job's status
// shows within it, its end at once.
const DefaultLiveHold = 2 * time.Second

// DefaultSessionTTL is how long a login lasts when Config.SessionTTL is 0.
const DefaultSessionTTL = 12 * time.Hour

// Console serves the web console. Build it with New, mount Handler at "/".
type Console struct {
	cfg   Config
	log   *slog.Logger
	mux   *http.ServeMux
	pages map[string]*template.Template
	// enq is the one enqueue path with its counting, as the API's.
	enq *catalog.Enqueuer
	// actions is each page's action, by pattern (Actions).
	actions map[string]auth.Action
}

// New builds a console over cfg.Store.
func New(cfg Config) (*Console, error) {
	if cfg.Store == nil || cfg.Syncer == nil {
		return nil, errors.New("console: Config.Store and Config.Syncer are required")
	}
	if len(cfg.Secret) == 0 {
		return nil, errors.New("console: Config.Secret is required to sign sessions")
	}
	if cfg.MaxInputBytes <= 0 {
		cfg.MaxInputBytes = DefaultMaxInputBytes
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.LiveHold <= 0 {
		cfg.LiveHold = DefaultLiveHold
	}
	c := &Console{cfg: cfg, log: cfg.Logger, mux: http.NewServeMux(), actions: map[string]auth.Action{},
		enq: &catalog.Enqueuer{Store: cfg.Store, Count: cfg.Metrics.JobEnqueued}}
	if c.log == nil {
		c.log = slog.Default()
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	c.pages = pages
	c.routes()
	return c, nil
}

// Handler is the console's http.Handler; mount it at "/".
func (c *Console) Handler() http.Handler { return securityHeaders(c.mux) }

func (c *Console) now() time.Time { return c.cfg.Clock.Wall() }

// isAdminHash reports whether hash is the bootstrap admin token's.
func (c *Console) isAdminHash(hash string) bool {
	return c.cfg.AdminToken != "" &&
		subtle.ConstantTimeCompare([]byte(hash), []byte(auth.Hash(c.cfg.AdminToken))) == 1
}

// securityHeaders sets the headers every console answer carries: no
// framing (clickjacking), no sniffing, no referrer leaks, and a content
// security policy that allows only the console's own scripts and styles.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "same-origin")
		hd.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
		h.ServeHTTP(w, r)
	})
}
