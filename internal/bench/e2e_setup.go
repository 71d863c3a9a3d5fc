package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/examples"
	"github.com/windforce/windforce/source"
)

// e2eWorkspace is where the bench runs its jobs: dev's workspace, and the
// same name on Postgres.
const e2eWorkspace = "default"

// ErrPostgresUnavailable is returned (wrapped) when the Postgres server an
// end-to-end run was pointed at does not answer.
var ErrPostgresUnavailable = errors.New("postgres is not reachable")

// setup is one fresh windforce installation driven over HTTP: its
// processes, its API, and how to take it all down again.
type setup struct {
	database string
	api      *apiClient
	// gitDir is where the setup may add file:// repositories as sources.
	gitDir  string
	procs   []*child
	closers []func(context.Context) error // run last to first
}

// close stops the processes (workers before servers: they were started
// last) and removes what the setup made.
func (s *setup) close(ctx context.Context) error {
	var errs []error
	for i := len(s.procs) - 1; i >= 0; i-- {
		errs = append(errs, s.procs[i].stop(30*time.Second))
	}
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i](ctx))
	}
	s.api.http.CloseIdleConnections()
	return errors.Join(errs...)
}

// workerPID is the process that runs the jobs (dev, or the worker): the
// last one started.
func (s *setup) workerPID() int { return s.procs[len(s.procs)-1].cmd.Process.Pid }

// alive returns an error naming the first process of the setup that
// exited, with its stderr.
func (s *setup) alive() error {
	for _, p := range s.procs {
		if gone, why := p.exited(); gone {
			return errors.New(why)
		}
	}
	return nil
}

const startWithin = 60 * time.Second

// startDev starts `windforce dev` in dir on an ephemeral port, exactly as
// a new user would run it: it makes its SQLite database, object cache and
// the example's git repository, syncs hello, and prints the console URL
// and the admin token, which are read from its stdout.
func startDev(bin, dir string, concurrency int) (*setup, error) {
	p, err := startChild("windforce dev", bin, nil, "dev", "--dir", dir, "--listen", "127.0.0.1:0",
		"--sync-interval", "0", "--concurrency", strconv.Itoa(concurrency))
	if err != nil {
		return nil, err
	}
	s := &setup{database: "sqlite", procs: []*child{p}, api: newAPIClient("", ""), gitDir: filepath.Join(dir, "bench-git")}
	base, err := p.line("console:", startWithin)
	if err == nil {
		s.api.url = strings.TrimSuffix(base, "/")
		s.api.token, err = p.line("admin token:", startWithin)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("start windforce dev: %w", err), s.close(context.Background()))
	}
	return s, nil
}

// startPostgresCluster makes a fresh database on the Postgres server at
// serverURL and runs one `windforce server` and one `windforce worker`
// on it (object cache in the database, as a multi-machine deployment
// has it), then registers the example as a file:// git source made with
// real git under dir and syncs it through the API. The database is
// dropped on close.
func startPostgresCluster(ctx context.Context, bin, dir, serverURL string, concurrency int) (s *setup, err error) {
	dbURL, drop, err := freshDatabase(ctx, serverURL)
	if err != nil {
		return nil, err
	}
	const secret, token = "bench-e2e-secret-0123456789abcdef", "bench-e2e-admin-0123456789abcdefgh"
	s = &setup{database: "postgres", api: newAPIClient("", token), closers: []func(context.Context) error{drop}}
	// built outlives the "return nil, err" below, which clears s before
	// this deferred clean-up runs.
	built := s
	defer func() {
		if err != nil {
			err = errors.Join(err, built.close(context.WithoutCancel(ctx)))
			s = nil
		}
	}()
	gitDir := filepath.Join(dir, "git")
	s.gitDir = gitDir
	bare := filepath.Join(gitDir, "hello.git")
	if err := (&source.Git{}).InitRepo(ctx, bare, "main", examples.Hello(), "hello example"); err != nil {
		return nil, fmt.Errorf("e2e postgres: example repository: %w", err)
	}
	common := []string{"WINDFORCE_SECRET=" + secret, "WINDFORCE_FILE_SOURCES=" + gitDir}
	srv, err := startChild("windforce server", bin, append(common, "WINDFORCE_ADMIN_TOKEN="+token),
		"server", "--listen", "127.0.0.1:0", "--database-url", dbURL, "--object-cache", "postgres", "--sync-interval", "0")
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, srv)
	base, err := srv.line("windforce server listening on ", startWithin)
	if err != nil {
		return nil, err
	}
	s.api.url = base
	wrk, err := startChild("windforce worker", bin, common, "worker", "--database-url", dbURL, "--object-cache", "postgres",
		"--dir", filepath.Join(dir, "worker"), "--concurrency", strconv.Itoa(concurrency), "--url", base)
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, wrk)
	if _, err := wrk.line("worker ", startWithin); err != nil {
		return nil, err
	}
	src := fmt.Sprintf(`{"id":"hello","url":%q,"branch":"main"}`, "file://"+bare)
	if _, err := s.api.call(ctx, http.StatusCreated, "POST", "/sources", src); err != nil {
		return nil, fmt.Errorf("e2e postgres: add the example source: %w", err)
	}
	if _, err := s.api.call(ctx, http.StatusOK, "POST", "/sources/hello/sync", ""); err != nil {
		return nil, fmt.Errorf("e2e postgres: sync the example: %w", err)
	}
	return s, nil
}

// freshDatabase creates a database of its own on the Postgres server at
// serverURL and returns its URL and a function that drops it (closing
// whatever connections are left).
func freshDatabase(ctx context.Context, serverURL string) (string, func(context.Context) error, error) {
	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", nil, fmt.Errorf("e2e postgres: %q is not a postgres:// URL", serverURL)
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	admin := withoutPoolParams(u)
	conn, err := pgx.Connect(cctx, admin)
	if err != nil {
		return "", nil, fmt.Errorf("%w at %s: %w", ErrPostgresUnavailable, u.Redacted(), err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	name := "wf_bench_e2e_" + randomHex(6)
	if _, err := conn.Exec(cctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("e2e postgres: create database: %w", err)
	}
	u.Path = "/" + name
	drop := func(ctx context.Context) error {
		// DROP DATABASE waits for a checkpoint, which on a server busy
		// with other tests' writes can take well over 30 s.
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			return fmt.Errorf("e2e postgres: drop database %s: %w", name, err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("e2e postgres: drop database %s: %w", name, err)
		}
		return nil
	}
	return u.String(), drop, nil
}

// withoutPoolParams is u without pgxpool's own parameters (pool_max_conns
// and the like), which a single connection would send to the server as
// settings it does not know; the server and worker get them.
func withoutPoolParams(u *url.URL) string {
	c := *u
	q := c.Query()
	for k := range q {
		if strings.HasPrefix(k, "pool_") {
			q.Del(k)
		}
	}
	c.RawQuery = q.Encode()
	return c.String()
}

// removeTree removes dir after making its directories writable again (the
// runner seals commit copies read-only).
func removeTree(dir string) error {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	return nil
}

// apiClient talks to one setup's HTTP API with the admin token, keeping
// enough idle connections for the highest concurrency.
type apiClient struct {
	url, token string
	http       *http.Client
}

func newAPIClient(base, token string) *apiClient {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	return &apiClient{url: base, token: token, http: &http.Client{Transport: tr}}
}

// call sends a request to the workspace path and returns the body when
// the status is want.
func (a *apiClient) call(ctx context.Context, want int, method, path, body string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, a.url+"/api/w/"+e2eWorkspace+path, strings.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	res, err := a.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if res.StatusCode != want {
		return nil, fmt.Errorf("%s %s: status %d, want %d: %s", method, path, res.StatusCode, want, bytes.TrimSpace(data))
	}
	return data, nil
}

// greetWait runs hello/greet through `?wait` and returns the round trip
// (from sending the request to the job's successful outcome read back)
// and the job's id.
func (a *apiClient) greetWait(ctx context.Context) (time.Duration, string, error) {
	return a.greetApp(ctx, "hello")
}

// greetApp is greetWait on app's greet action.
func (a *apiClient) greetApp(ctx context.Context, app string) (time.Duration, string, error) {
	began := time.Now()
	data, err := a.call(ctx, http.StatusOK, "POST", "/jobs/run/"+app+"/greet?wait=60s", `{"name":"bench"}`)
	took := time.Since(began)
	if err != nil {
		return 0, "", err
	}
	var out struct {
		ID     string          `json:"id"`
		Status string          `json:"status"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return 0, "", fmt.Errorf("run %s/greet: decode %s: %w", app, data, err)
	}
	if out.Status != "success" {
		return 0, "", fmt.Errorf("run %s/greet: job %s ended %s: %s", app, out.ID, out.Status, out.Error)
	}
	return took, out.ID, nil
}

// jobTimes reads a finished job's timestamps as the server recorded them.
func (a *apiClient) jobTimes(ctx context.Context, id string) (created, started, completed time.Time, err error) {
	data, err := a.call(ctx, http.StatusOK, "GET", "/jobs/"+id, "")
	if err != nil {
		return created, started, completed, err
	}
	var j struct {
		CreatedAt   time.Time  `json:"created_at"`
		StartedAt   *time.Time `json:"started_at"`
		CompletedAt *time.Time `json:"completed_at"`
	}
	if err := json.Unmarshal(data, &j); err != nil {
		return created, started, completed, fmt.Errorf("job %s: decode %s: %w", id, data, err)
	}
	if j.StartedAt == nil || j.CompletedAt == nil {
		return created, started, completed, fmt.Errorf("job %s: no started_at or completed_at: %s", id, data)
	}
	return j.CreatedAt, *j.StartedAt, *j.CompletedAt, nil
}
