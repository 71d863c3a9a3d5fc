// Package apitest gives tests a running windforce API over a real backend:
// a migrated store (a SQLite file or a Postgres schema from
// internal/testdb), an object cache, the HTTP server on httptest, and a
// real git repository holding examples/hello, added as source "main" and
// synced. StartWorker adds an in-process worker that runs jobs.
package apitest

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/windforce/windforce/internal/gittest"
	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/secrets"
	"github.com/windforce/windforce/server"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/store"
	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

// Defaults for the Options fields left zero.
const (
	DefaultWorkspace  = "ws"
	DefaultAdminToken = "test-admin-token"
	DefaultSecret     = "test-secret"
)

// Options says how the callers' envs differ. The zero value is a plain API
// with the defaults above and examples/hello synced.
type Options struct {
	// Workspace holds source "main" (default DefaultWorkspace).
	Workspace string
	// Secret signs job tokens, for the API and for workers (default
	// DefaultSecret).
	Secret []byte
	// AdminToken is the API's admin token (default DefaultAdminToken).
	AdminToken string
	// MaxInputBytes bounds request bodies (0: the server's default).
	MaxInputBytes int64
	// Console, when set, builds the handler mounted at "/" from the env's
	// store and syncer (the store is the backend's concrete store, so it
	// may be asserted to a wider interface).
	Console func(s server.Store, syncer *source.Syncer) (http.Handler, error)
	// NoSource leaves examples/hello committed in Repo but not added as a
	// source, for callers that add and sync it their own way.
	NoSource bool
	// WaitPoll and FollowPoll are the server's fallback polls (0: the
	// server's defaults); a test makes them huge to prove that waits and
	// log streams are woken by the completion itself.
	WaitPoll, FollowPoll time.Duration
}

func (o Options) withDefaults() Options {
	if o.Workspace == "" {
		o.Workspace = DefaultWorkspace
	}
	if o.Secret == nil {
		o.Secret = []byte(DefaultSecret)
	}
	if o.AdminToken == "" {
		o.AdminToken = DefaultAdminToken
	}
	return o
}

// Env is one running API over one backend.
type Env struct {
	// DB is the backend's store, migrated.
	DB server.Store
	// Cache is the object cache the syncer and workers share.
	Cache objectcache.Cache
	// Syncer syncs sources into DB and Cache.
	Syncer *source.Syncer
	// URL is the API's base URL.
	URL string
	// Repo is the git repository holding examples/hello on branch main.
	Repo *gittest.Repo
	// Sync is the API's answer to the first sync of source "main" (nil
	// with Options.NoSource).
	Sync map[string]any
	// Options are the options the env was built with, defaults filled in.
	Options Options
	// SecretsKey is the key the API seals secrets with (derived from
	// Options.Secret, as a server without WINDFORCE_SECRETS_KEY does).
	SecretsKey secrets.Key
}

// ForEachBackend runs fn once on SQLite and once on Postgres, in parallel
// subtests, each with its own env built with opts.
func ForEachBackend(t *testing.T, opts Options, fn func(t *testing.T, e *Env)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, NewSQLite(t, opts))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		fn(t, NewPostgres(t, opts))
	})
}

// NewSQLite is an env on a fresh SQLite file with a file object cache.
func NewSQLite(t testing.TB, opts Options) *Env {
	t.Helper()
	s, err := sqlite.Open(t.Context(), testdb.SQLitePath(t), sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	c, err := objectcache.NewFileCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return New(t, store.New(s), c, opts)
}

// NewPostgres is an env on a fresh Postgres schema with the store's own
// object cache. Without Postgres it skips loudly (see testdb).
func NewPostgres(t testing.TB, opts Options) *Env {
	t.Helper()
	url, schema := testdb.PostgresSchema(t)
	s, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema, MaxConns: 6, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return New(t, store.New(s), s.ObjectCache(), opts)
}

// New migrates s, serves the API over it and c, and commits examples/hello
// to a fresh repository, added as source "main" and synced unless
// opts.NoSource.
func New(t testing.TB, s server.Store, c objectcache.Cache, opts Options) *Env {
	t.Helper()
	opts = opts.withDefaults()
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	e := &Env{DB: s, Cache: c, Syncer: &source.Syncer{Catalog: s, Cache: c, Logger: log, AnyFileSource: true}, Options: opts}
	key, err := secrets.DeriveKey(opts.Secret)
	if err != nil {
		t.Fatal(err)
	}
	e.SecretsKey = key
	cfg := server.Config{Store: s, Syncer: e.Syncer, Secret: opts.Secret, AdminToken: opts.AdminToken,
		MaxInputBytes: opts.MaxInputBytes, Logger: log, WaitPoll: opts.WaitPoll, FollowPoll: opts.FollowPoll,
		SecretsKey: key}
	if opts.Console != nil {
		con, err := opts.Console(s, e.Syncer)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Console = con
	}
	api, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(api.Handler())
	t.Cleanup(hs.Close)
	e.URL = hs.URL
	e.Repo = gittest.New(t)
	e.Repo.CopyDir(t, gittest.Example("hello"))
	e.Repo.CommitPush(t, "example")
	if !opts.NoSource {
		e.addSource(t)
	}
	return e
}

// addSource adds Repo as source "main" and syncs it through the API.
func (e *Env) addSource(t testing.TB) {
	t.Helper()
	body, err := json.Marshal(map[string]string{"id": "main", "url": e.Repo.URL, "branch": "main"})
	if err != nil {
		t.Fatal(err)
	}
	base := "/api/w/" + e.Options.Workspace + "/sources"
	e.post(t, base, body, http.StatusCreated)
	e.Sync = e.post(t, base+"/main/sync", nil, http.StatusOK)
}

// post sends body with the admin token and decodes the JSON object
// answered with status (numbers as json.Number).
func (e *Env) post(t testing.TB, path string, body []byte, status int) map[string]any {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", e.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.Options.AdminToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(res.Body); err != nil {
		t.Fatalf("POST %s: read the answer: %v", path, err)
	}
	if res.StatusCode != status {
		t.Fatalf("POST %s: status %d, want %d; body %s", path, res.StatusCode, status, buf.Bytes())
	}
	var v map[string]any
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("POST %s: body %s: %v", path, buf.Bytes(), err)
	}
	return v
}
