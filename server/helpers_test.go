package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/windforce/windforce/internal/apitest"
	"github.com/windforce/windforce/internal/gittest"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/server"
	"github.com/windforce/windforce/source"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	ws         = "ws"
	adminToken = "test-admin-token"
	maxInput   = 4096
)

var secret = []byte("test-secret")

// env is one running API over one backend, with examples/hello synced as
// source "main" of workspace ws.
type env struct {
	t     testing.TB
	api   *apitest.Env
	db    server.Store
	cache objectcache.Cache
	url   string
	repo  *gittest.Repo
	sync1 map[string]any
}

// options are the API's settings the tests rely on.
var options = apitest.Options{Workspace: ws, Secret: secret, AdminToken: adminToken, MaxInputBytes: maxInput}

// forEachBackend runs fn once on SQLite and once on Postgres, in parallel.
func forEachBackend(t *testing.T, fn func(t *testing.T, e *env)) {
	apitest.ForEachBackend(t, options, func(t *testing.T, a *apitest.Env) { fn(t, wrap(t, a)) })
}

// newSQLiteEnv is an env on SQLite with a file object cache.
func newSQLiteEnv(t testing.TB) *env {
	t.Helper()
	return wrap(t, apitest.NewSQLite(t, options))
}

func wrap(t testing.TB, a *apitest.Env) *env {
	return &env{t: t, api: a, db: a.DB, cache: a.Cache, url: a.URL, repo: a.Repo, sync1: a.Sync}
}

// resp is an answered request.
type resp struct {
	t      testing.TB
	status int
	header http.Header
	body   []byte
}

// call sends a request with token ("" for none) and body ("" for none).
func (e *env) call(method, path, token, body string, hdr ...string) *resp {
	e.t.Helper()
	return e.send(method, path, token, strings.NewReader(body), int64(len(body)), hdr...)
}

// send sends a request whose body has length n (-1: unknown, chunked).
func (e *env) send(method, path, token string, body io.Reader, n int64, hdr ...string) *resp {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.url+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	req.ContentLength = n
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return &resp{t: e.t, status: res.StatusCode, header: res.Header, body: data}
}

// want fails unless the status is status.
func (r *resp) want(status int) *resp {
	r.t.Helper()
	if r.status != status {
		r.t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	return r
}

// wantError fails unless the answer is the error body with status and code.
func (r *resp) wantError(status int, code string) map[string]any {
	r.t.Helper()
	r.want(status)
	var body map[string]map[string]any
	if err := json.Unmarshal(r.body, &body); err != nil || len(body) != 1 {
		r.t.Fatalf("error body %s: %v", r.body, err)
	}
	e := body["error"]
	if len(e) != 3 || e["code"] != code || e["message"] == "" || e["details"] == nil {
		r.t.Fatalf("error body %s, want code %q with code, message and details", r.body, code)
	}
	return e["details"].(map[string]any)
}

// obj decodes a JSON object body.
func (r *resp) obj() map[string]any {
	r.t.Helper()
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		r.t.Fatalf("body %s: %v", r.body, err)
	}
	return v
}

// jobCount counts the workspace's jobs: no worker runs, so every job the
// API created is still waiting or scheduled in queue health.
func (e *env) jobCount() int64 {
	e.t.Helper()
	rows, err := e.db.Health(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	var n int64
	for _, h := range rows {
		n += h.Waiting + h.Scheduled + h.Running
	}
	return n
}

// second serves a second API over e's store (its catalog is synced
// already) whose Config set adjusts, and returns an env that talks to it.
// Its Syncer allows any file:// source, as the first API's does.
func (e *env) second(t *testing.T, set func(*server.Config)) *env {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	cfg := server.Config{Store: e.db, Syncer: &source.Syncer{Catalog: e.db, Cache: e.cache, Logger: log, AnyFileSource: true},
		Secret: secret, AdminToken: adminToken, MaxInputBytes: maxInput, Logger: log}
	set(&cfg)
	api, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(api.Handler())
	t.Cleanup(hs.Close)
	out := *e
	out.t, out.url = t, hs.URL
	return &out
}
