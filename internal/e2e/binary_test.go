package e2e_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/windforce/windforce/internal/testdb"
)

// The tests in this file and in dev_test.go / cluster_test.go start the
// real windforce binary and drive it only through HTTP and the CLI.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds cmd/windforce once per test run and returns its path.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "windforce-e2e-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "windforce")
		out, err := exec.Command("go", "build", "-race", "-o", binPath, "../../cmd/windforce").CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("build windforce: %v", buildErr)
	}
	return binPath
}

// proc is a running windforce process whose stdout lines are collected.
type proc struct {
	cmd    *exec.Cmd
	stderr *lockedWriter
	mu     sync.Mutex
	lines  []string
	more   chan struct{}
	done   chan struct{}
	err    error
}

// start runs the binary with args and extra environment; it is stopped
// with SIGTERM (then waited for) at cleanup.
func start(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	if args[0] == "dev" || args[0] == "worker" {
		testdb.RequireSandbox(t) // they refuse to start without it
	}
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &lockedWriter{w: &stderr}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stderr: cmd.Stderr.(*lockedWriter), more: make(chan struct{}, 1), done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start windforce %v: %v", args, err)
	}
	go p.read(out)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("windforce %v stderr:\n%s", args, tail(stderr.String(), 4000))
		}
	})
	return p
}

func (p *proc) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		p.mu.Lock()
		p.lines = append(p.lines, sc.Text())
		p.mu.Unlock()
		select {
		case p.more <- struct{}{}:
		default:
		}
	}
	p.err = p.cmd.Wait()
	close(p.done)
}

// line waits for a stdout line starting with prefix and returns the rest.
func (p *proc) line(t *testing.T, prefix string) string {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		p.mu.Lock()
		for _, l := range p.lines {
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				p.mu.Unlock()
				return strings.TrimSpace(rest)
			}
		}
		p.mu.Unlock()
		select {
		case <-p.more:
		case <-p.done:
			t.Fatalf("windforce exited (%v) before printing %q", p.err, prefix)
		case <-deadline:
			t.Fatalf("windforce printed no %q within 60s", prefix)
		}
	}
}

// lockedWriter lets the process's stderr be read while it is written.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// String returns what was written so far (the writer wraps a bytes.Buffer).
func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.(*bytes.Buffer).String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// cliResult is one finished client command.
type cliResult struct {
	stdout, stderr string
	code           int
}

// cli runs a client command of the binary against url with token.
func cli(t *testing.T, url, token string, args ...string) cliResult {
	t.Helper()
	return cliEnv(t, []string{"WINDFORCE_URL=" + url, "WINDFORCE_TOKEN=" + token}, args...)
}

// api is an HTTP client of one running server.
type api struct {
	t     *testing.T
	url   string
	token string
}

// reply is an answered API request.
type reply struct {
	status int
	body   []byte
}

// do sends a request with the api's token (or token, when given) and
// returns the status and body.
func (a api) do(method, path, body string, hdr ...string) reply {
	a.t.Helper()
	req, err := http.NewRequestWithContext(a.t.Context(), method, a.url+path, strings.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return reply{status: res.StatusCode, body: data}
}

// want fails unless the status is status, and decodes the JSON body.
func (r reply) want(t *testing.T, status int) map[string]any {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	var v map[string]any
	if len(bytes.TrimSpace(r.body)) > 0 {
		if err := json.Unmarshal(r.body, &v); err != nil {
			t.Fatalf("body %s: %v", r.body, err)
		}
	}
	return v
}

// waitStatus polls a job until its status is one of want, and returns it.
func (a api) waitStatus(ws, id string, within time.Duration, want ...string) map[string]any {
	a.t.Helper()
	deadline := time.Now().Add(within)
	for {
		j := a.do("GET", "/api/w/"+ws+"/jobs/"+id, "").want(a.t, http.StatusOK)
		for _, s := range want {
			if j["status"] == s {
				return j
			}
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("job %s is %v after %v, want %v", id, j["status"], within, want)
		}
		time.Sleep(pollEvery)
	}
}

// cliEnv runs the binary with extra environment and no server.
func cliEnv(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return cliResult{stdout: out.String(), stderr: errb.String(), code: ee.ExitCode()}
	}
	if err != nil {
		t.Fatalf("windforce %v: %v", args, err)
	}
	return cliResult{stdout: out.String(), stderr: errb.String()}
}

// pathWith puts the directory of bin first on PATH.
func pathWith(bin string) string {
	return filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
