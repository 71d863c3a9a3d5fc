package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestRunWaitExitCodes runs examples/hello through a real worker with
// `run --wait`: success prints the result (exit 0) and streams the logs,
// a failing action exits 1 with its message, a canceled job exits 2.
func TestRunWaitExitCodes(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *apiEnv) {
		e.startWorker()

		ok := e.run("run", "hello/greet", "--input", `{"name":"Ada"}`, "--wait", "--timeout", "60s")
		if ok.err != nil {
			t.Fatalf("run --wait greet: %v\nstderr: %s", ok.err, ok.stderr)
		}
		t.Logf("run --wait printed on stderr:\n%s", ok.stderr)
		if got := obj(t, ok.stdout); got["greeting"] != "Hello, Ada!" {
			t.Fatalf("result %v", got)
		}
		if !strings.Contains(ok.stderr, "greeting Ada") || !strings.Contains(ok.stderr, "success") {
			t.Fatalf("stderr lacks the logs or the final status: %q", ok.stderr)
		}

		bad := e.run("run", "hello/fail", "--input", `{"message":"boom"}`, "--wait", "--json")
		var failed *JobFailedError
		if !errors.As(bad.err, &failed) || ExitCode(bad.err) != 1 {
			t.Fatalf("run --wait fail: err %v (exit %d), want a JobFailedError with exit 1; stderr %s", bad.err, ExitCode(bad.err), bad.stderr)
		}
		t.Logf("run --wait of a failing job printed on stderr:\n%s", bad.stderr)
		if !strings.Contains(bad.stderr, "boom") {
			t.Fatalf("stderr lacks the job's error message: %q", bad.stderr)
		}
		if out := obj(t, bad.stdout); out["status"] != "failure" {
			t.Fatalf("--json outcome %v", out)
		}

		res := e.run("jobs", "result", failed.ID)
		if ExitCode(res.err) != 1 || !strings.Contains(res.stderr, "boom") {
			t.Fatalf("jobs result of the failed job: %v, stderr %q", res.err, res.stderr)
		}
	})
}

// TestRunWaitCanceled cancels a waiting job while `run --wait` follows it:
// the command ends with exit code 2. No worker is needed: the job is
// scheduled an hour ahead, so cancel completes it at once.
func TestRunWaitCanceled(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *apiEnv) {
		stderr := &syncBuffer{}
		done := make(chan cmdResult, 1)
		go func() {
			done <- e.runIO(context.Background(), stderr, "run", "hello/greet", "--input", `{"name":"Bo"}`,
				"--scheduled-for", "1h", "--wait")
		}()
		idRE := regexp.MustCompile(`job ([0-9a-f-]{36}) queued`)
		var id string
		waitFor(t, "run --wait to print the job id", func() bool {
			m := idRE.FindStringSubmatch(stderr.String())
			if m != nil {
				id = m[1]
			}
			return m != nil
		})
		cancel := e.mustRun("jobs", "cancel", id, "--reason", "test says stop")
		if !strings.Contains(cancel.stdout, "canceled") {
			t.Fatalf("jobs cancel printed %q", cancel.stdout)
		}
		var r cmdResult
		select {
		case r = <-done:
		case <-time.After(60 * time.Second):
			t.Fatal("run --wait did not end after the job was canceled")
		}
		var ce *JobCanceledError
		if !errors.As(r.err, &ce) || ExitCode(r.err) != 2 || ce.ID != id {
			t.Fatalf("run --wait of a canceled job: %v (exit %d), stderr %q", r.err, ExitCode(r.err), r.stderr)
		}
		if !strings.Contains(r.stderr, "test says stop") {
			t.Fatalf("stderr lacks the cancel reason: %q", r.stderr)
		}
		again := e.run("jobs", "cancel", id)
		var apiErr *APIError
		if !errors.As(again.err, &apiErr) || apiErr.Status != 409 {
			t.Fatalf("second cancel: %v, want 409", again.err)
		}
	})
}

// TestRunWithoutWait prints the id (or {"id"} with --json), takes the
// input from a file and from stdin-like @file, and stops waiting at
// --timeout while the job keeps going.
func TestRunWithoutWait(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *apiEnv) {
		plain := e.mustRun("run", "hello/greet", "--input", `{"name":"Cy"}`, "--priority", "5", "--coalesce-key", "k1")
		id := strings.TrimSpace(plain.stdout)
		if !regexp.MustCompile(`^[0-9a-f-]{36}$`).MatchString(id) {
			t.Fatalf("run printed %q, want a job id", plain.stdout)
		}
		job := obj(t, e.mustRun("jobs", "get", id, "--json").stdout)
		if job["trigger_kind"] != "cli" || job["priority"] != float64(5) || job["coalesce_key"] != "k1" {
			t.Fatalf("job %v: want trigger cli, priority 5, coalesce key k1", job)
		}
		get := e.mustRun("jobs", "get", id)
		if !strings.Contains(get.stdout, "hello/greet") || !strings.Contains(get.stdout, `"name": "Cy"`) {
			t.Fatalf("jobs get printed %q", get.stdout)
		}

		file := filepath.Join(t.TempDir(), "in.json")
		if err := os.WriteFile(file, []byte(`{"name":"Di"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		withJSON := e.mustRun("run", "hello/greet", "--input", "@"+file, "--json")
		fid, _ := obj(t, withJSON.stdout)["id"].(string)
		if in := obj(t, e.mustRun("jobs", "get", fid, "--json").stdout)["input"].(map[string]any); in["name"] != "Di" {
			t.Fatalf("input from @file: %v", in)
		}

		pending := e.run("jobs", "result", fid)
		if pending.err == nil || !strings.Contains(pending.err.Error(), "no result yet") {
			t.Fatalf("jobs result of a queued job: %v", pending.err)
		}
		timeout := e.run("run", "hello/greet", "--input", `{"name":"Ed"}`, "--wait", "--timeout", "300ms")
		if timeout.err == nil || !strings.Contains(timeout.err.Error(), "still queued") || ExitCode(timeout.err) != 1 {
			t.Fatalf("run --wait --timeout with no worker: %v", timeout.err)
		}
	})
}

// TestRunRefusals: a bad APP/ACTION or --input is a usage error (exit 2)
// and sends nothing; the server's 422 shows the JSON pointer of each
// schema violation; a 404 and a missing token read clearly.
func TestRunRefusals(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *apiEnv) {
		for _, args := range [][]string{
			{"run", "hello"},
			{"run", "hello/greet", "--input", `{"name":`},
			{"run", "hello/greet", "extra"},
			{"run", "hello/greet", "--scheduled-for", "tomorrow-ish"},
			{"run", "hello/greet", "--no-such-flag"},
		} {
			if r := e.run(args...); ExitCode(r.err) != 2 {
				t.Errorf("windforce %v: %v (exit %d), want a usage error", args, r.err, ExitCode(r.err))
			}
		}
		r := e.run("run", "hello/greet", "--input", `{"name":5}`)
		var apiErr *APIError
		if !errors.As(r.err, &apiErr) || apiErr.Status != 422 || ExitCode(r.err) != 1 {
			t.Fatalf("schema violation: %v", r.err)
		}
		msg := r.err.Error()
		if !strings.Contains(msg, "invalid_input") || !strings.Contains(msg, "at /name:") {
			t.Fatalf("422 reads %q, want the code and the JSON pointer /name", msg)
		}
		if r := e.run("run", "nope/greet"); !errors.As(r.err, &apiErr) || apiErr.Status != 404 || !strings.Contains(r.err.Error(), "not_found") {
			t.Fatalf("unknown app: %v", r.err)
		}
		r = e.run("run", "hello/greet", "--input", `{"name":"X"}`, "--token", "")
		if !errors.As(r.err, &apiErr) || apiErr.Status != 401 || !strings.Contains(r.err.Error(), "bearer token") ||
			!strings.Contains(r.err.Error(), "WINDFORCE_TOKEN") {
			t.Fatalf("no token: %v", r.err)
		}
	})
}

// TestAPIErrorRendering checks the error body turns into a readable error
// even when it is not the API's shape.
func TestAPIErrorRendering(t *testing.T) {
	t.Parallel()
	e := parseAPIError("POST", "/api/w/default/sources/s/sync", 422,
		[]byte(`{"error":{"code":"sync_failed","message":"windforce.yaml: apps is empty","details":{"step":"manifest","commit":"abc","source":"s"}}}`))
	want := "422 sync_failed: windforce.yaml: apps is empty (POST /api/w/default/sources/s/sync)\n  commit: abc\n  source: s\n  step: manifest"
	if e.Error() != want {
		t.Fatalf("got\n%s\nwant\n%s", e.Error(), want)
	}
	e = parseAPIError("GET", "/x", 502, []byte("<html>bad gateway</html>"))
	if e.Code != "bad_gateway" || e.Message != "<html>bad gateway</html>" {
		t.Fatalf("non-JSON error body: %+v", e)
	}
}

// TestParseArgsAndInputs covers the small parsers of the client.
func TestParseArgsAndInputs(t *testing.T) {
	t.Parallel()
	fs, cf := newClientFlags("x", &strings.Builder{})
	wait := fs.Bool("wait", false, "")
	pos, err := parseArgs(fs, []string{"--json", "a/b", "--wait", "c"}, 2, 2, "")
	if err != nil || len(pos) != 2 || pos[0] != "a/b" || pos[1] != "c" || !*wait || !cf.json {
		t.Fatalf("interspersed flags: %v %v wait=%v json=%v", pos, err, *wait, cf.json)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if got, err := parseWhen("+10m", now); err != nil || !got.Equal(now.Add(10*time.Minute)) {
		t.Fatalf("parseWhen(+10m) = %v, %v", got, err)
	}
	if got, err := parseWhen("2026-05-06T07:08:09Z", now); err != nil || got.Year() != 2026 || got.Month() != 5 {
		t.Fatalf("parseWhen(RFC 3339) = %v, %v", got, err)
	}
	if in, err := readInput(""); err != nil || string(in) != "{}" {
		t.Fatalf("readInput(\"\") = %s, %v", in, err)
	}
	if _, err := readInput("@" + filepath.Join(t.TempDir(), "missing.json")); err == nil || ExitCode(err) != 1 {
		t.Fatalf("readInput of a missing file: %v", err)
	}
}

// TestRunSendsWhatItWasGiven checks the request `run` sends: the input
// read from stdin, the cli trigger header and the query parameters. Not
// parallel: it replaces Stdin.
func TestRunSendsWhatItWasGiven(t *testing.T) {
	var got *http.Request
	var body []byte
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		body, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"j9"}`)
	}))
	t.Cleanup(hs.Close)
	old := Stdin
	Stdin = strings.NewReader(`{"name":"from stdin"}`)
	t.Cleanup(func() { Stdin = old })
	var out, errOut bytes.Buffer
	err := Run(context.Background(), []string{"run", "my app/greet", "--input", "-", "--priority", "0",
		"--scheduled-for", "2030-01-02T03:04:05Z", "--url", hs.URL + "/", "--workspace", "team a", "--token", "tk"}, &out, &errOut)
	if err != nil || strings.TrimSpace(out.String()) != "j9" {
		t.Fatalf("run: %v, printed %q", err, out.String())
	}
	if got.URL.EscapedPath() != "/api/w/team%20a/jobs/run/my%20app/greet" || got.Header.Get("X-Windforce-Trigger") != "cli" ||
		got.Header.Get("Authorization") != "Bearer tk" {
		t.Fatalf("request %s %v", got.URL, got.Header)
	}
	q := got.URL.Query()
	if q.Get("priority") != "0" || q.Get("scheduled_for") != "2030-01-02T03:04:05Z" || q.Has("coalesce_key") {
		t.Fatalf("query %v", q)
	}
	if string(body) != `{"name":"from stdin"}` {
		t.Fatalf("body %q", body)
	}
}
