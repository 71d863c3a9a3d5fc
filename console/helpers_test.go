package console_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/windforce/windforce/console"
	"github.com/windforce/windforce/internal/apitest"
	"github.com/windforce/windforce/internal/gittest"
	"github.com/windforce/windforce/metrics"
	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/secrets"
	"github.com/windforce/windforce/server"
	"github.com/windforce/windforce/source"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	ws         = "ws"
	adminToken = "test-admin-token"
)

var secret = []byte("test-secret")

// store is what the tests need of a backend: the console's store and the
// API's.
type store interface {
	console.Store
	server.Store
}

// clock is a settable clock for session expiry.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.t.IsZero() {
		return time.Now()
	}
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// env is the API with the console mounted, over one backend, with
// examples/hello synced as source "main" of workspace ws.
type env struct {
	t     testing.TB
	db    store
	url   string
	repo  *gittest.Repo
	clock *clock
	// metrics is the console's (the API counts on its own).
	metrics *metrics.Metrics
}

// forEachBackend runs fn once on SQLite and once on Postgres, in parallel.
func forEachBackend(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, newSQLiteEnv(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		clk, m := &clock{}, metrics.New(metrics.Options{})
		fn(t, wrap(t, apitest.NewPostgres(t, options(clk, m)), clk, m))
	})
}

func newSQLiteEnv(t testing.TB) *env {
	t.Helper()
	clk, m := &clock{}, metrics.New(metrics.Options{})
	return wrap(t, apitest.NewSQLite(t, options(clk, m)), clk, m)
}

// options mount the console, on clk and counting in m, at "/" of the API.
func options(clk *clock, m *metrics.Metrics) apitest.Options {
	return apitest.Options{Workspace: ws, Secret: secret, AdminToken: adminToken,
		Console: func(s server.Store, syncer *source.Syncer) (http.Handler, error) {
			cs, ok := s.(store)
			if !ok {
				return nil, fmt.Errorf("store %T is not a console.Store", s)
			}
			// LiveHold longer than any test: a held job page answers only
			// when the job's completion wakes it.
			key, err := secrets.DeriveKey(secret)
			if err != nil {
				return nil, err
			}
			con, err := console.New(console.Config{Store: cs, Syncer: syncer, Secret: secret, SecretsKey: key, AdminToken: adminToken,
				LiveHold: time.Hour, Clock: clk.now, Logger: slog.New(slog.DiscardHandler), Metrics: m})
			if err != nil {
				return nil, err
			}
			return con.Handler(), nil
		}}
}

func wrap(t testing.TB, a *apitest.Env, clk *clock, m *metrics.Metrics) *env {
	return &env{t: t, db: a.DB.(store), url: a.URL, repo: a.Repo, clock: clk, metrics: m}
}

// browser is a user agent with a cookie jar that does not follow
// redirects, so tests see each answer.
type browser struct {
	e    *env
	c    *http.Client
	csrf string
}

func (e *env) browser() *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return &browser{e: e, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// page is an answered request.
type page struct {
	t        testing.TB
	status   int
	header   http.Header
	body     string
	location string
}

func (b *browser) do(method, path string, form url.Values, hdr ...string) *page {
	b.e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(b.e.t.Context(), method, b.e.url+path, body)
	if err != nil {
		b.e.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		b.e.t.Fatal(err)
	}
	p := &page{t: b.e.t, status: res.StatusCode, header: res.Header, body: string(data), location: res.Header.Get("Location")}
	if m := csrfRE.FindStringSubmatch(p.body); m != nil {
		b.csrf = m[1]
	}
	return p
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

func (b *browser) get(path string) *page { return b.do("GET", path, nil) }

// post sends a form with the session's CSRF token.
func (b *browser) post(path string, form url.Values) *page {
	if form == nil {
		form = url.Values{}
	}
	if b.csrf != "" && form.Get("csrf") == "" {
		form.Set("csrf", b.csrf)
	}
	return b.do("POST", path, form)
}

// login logs in with token and loads the runs page (for the CSRF token).
func (b *browser) login(token string) {
	b.e.t.Helper()
	p := b.do("POST", "/login", url.Values{"token": {token}})
	if p.status != http.StatusSeeOther {
		b.e.t.Fatalf("login answered %d: %s", p.status, p.body)
	}
	b.get(p.location).want(http.StatusOK)
}

func (p *page) want(status int) *page {
	p.t.Helper()
	if p.status != status {
		p.t.Fatalf("status %d, want %d; body:\n%s", p.status, status, p.body)
	}
	return p
}

func (p *page) contains(subs ...string) *page {
	p.t.Helper()
	for _, s := range subs {
		if !strings.Contains(p.body, s) {
			p.t.Fatalf("page lacks %q; body:\n%s", s, p.body)
		}
	}
	return p
}

// toLogin fails unless the answer sends the browser to the login page.
func (p *page) toLogin() {
	p.t.Helper()
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/login") {
		p.t.Fatalf("answer %d to %q, want a redirect to /login; body %s", p.status, p.location, p.body)
	}
}

var nextRE = regexp.MustCompile(`href="(/w/ws/runs\?[^"]*)" rel="next"`)

func itoa(i int) string { return strconv.Itoa(i) }

func (e *env) schedules() []schedule.Schedule {
	e.t.Helper()
	l, err := e.db.ListSchedules(e.t.Context(), ws)
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}
