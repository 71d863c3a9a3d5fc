package e2e_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// devWS is the workspace `windforce dev` registers the example in.
const devWS = "default"

// devServer is a running `windforce dev`.
type devServer struct {
	proc  *proc
	dir   string
	url   string
	token string
}

// startDev runs `windforce dev` in a fresh directory on a free port and
// waits for its banner.
func startDev(t *testing.T, dir string, env ...string) *devServer {
	t.Helper()
	requireBun(t)
	p := start(t, append(env, "WINDFORCE_CONCURRENCY=4"), "dev", "--dir", dir, "--listen", "127.0.0.1:0", "--sync-interval", "0")
	t.Cleanup(func() { unseal(dir) })
	d := &devServer{proc: p, dir: dir}
	d.url = strings.TrimSuffix(p.line(t, "console: "), "/")
	d.token = p.line(t, "admin token: ")
	return d
}

func (d *devServer) api(t *testing.T) api { return api{t: t, url: d.url, token: d.token} }

// TestDevFromNothing is the newcomer's path: `windforce dev` in an empty
// directory, then `windforce run hello/greet --wait`.
func TestDevFromNothing(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	d := startDev(t, dir)
	// No token given: the client finds the one dev keeps in its directory.
	r := cliEnv(t, []string{"WINDFORCE_URL=" + d.url, "WINDFORCE_DIR=" + dir, "WINDFORCE_TOKEN="},
		"run", "hello/greet", "--input", `{"name":"Ada"}`, "--wait")
	if r.code != 0 || !strings.Contains(r.stdout, "Hello, Ada!") {
		t.Fatalf("run --wait: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(lastJSON(r.stdout)), &res); err != nil {
		t.Fatalf("run --wait printed no JSON result: %q", r.stdout)
	}
	// The example is a real git source in dir, and dev keeps its token.
	if _, err := os.Stat(filepath.Join(dir, "git", "hello.git", "HEAD")); err != nil {
		t.Fatalf("example repository: %v", err)
	}
	kept, err := os.ReadFile(filepath.Join(dir, "admin-token"))
	if err != nil || strings.TrimSpace(string(kept)) != d.token {
		t.Fatalf("admin token kept in dir: %q, %v", kept, err)
	}
}

// TestDevRestartKeepsState: a second start on the same directory reuses
// the token, the source and the jobs.
func TestDevRestartKeepsState(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	d := startDev(t, dir)
	out := d.api(t).do("POST", "/api/w/default/jobs/run/hello/greet?wait=30s", `{"name":"Bo"}`).want(t, http.StatusOK)
	d.proc.stop(t)
	d2 := startDev(t, dir)
	if d2.token != d.token {
		t.Fatalf("token changed across restarts")
	}
	j := d2.api(t).do("GET", "/api/w/default/jobs/"+out["id"].(string), "").want(t, http.StatusOK)
	if j["status"] != "success" {
		t.Fatalf("job after restart: %v", j)
	}
	srcs := d2.api(t).do("GET", "/api/w/default/sources", "").want(t, http.StatusOK)
	if n := len(srcs["sources"].([]any)); n != 1 {
		t.Fatalf("sources after restart: %v", srcs)
	}
}

// TestDevActions runs each example action over HTTP and the CLI: success,
// failure (exit 1), cancel of a sleeping job (its process is gone, exit 2
// for a waiting client), ?wait ending in 202, and the error table.
func TestDevActions(t *testing.T) {
	t.Parallel()
	d := startDev(t, filepath.Join(t.TempDir(), "state"))
	a := d.api(t)
	t.Run("fail exits 1", func(t *testing.T) {
		t.Parallel()
		r := cli(t, d.url, d.token, "run", "hello/fail", "--input", `{"message":"boom"}`, "--wait")
		if r.code != 1 || !strings.Contains(r.stderr, "boom") {
			t.Fatalf("run fail --wait: exit %d, stderr %s", r.code, r.stderr)
		}
	})
	t.Run("wait ends in 202", func(t *testing.T) {
		t.Parallel()
		a := api{t: t, url: d.url, token: d.token}
		out := a.do("POST", "/api/w/default/jobs/run/hello/sleep?wait=300ms", `{"seconds":30}`).want(t, http.StatusAccepted)
		if out["status"] != "queued" && out["status"] != "running" {
			t.Fatalf("202 body %v", out)
		}
		a.do("POST", "/api/w/default/jobs/"+out["id"].(string)+"/cancel", `{"reason":"done"}`).want(t, http.StatusOK)
	})
	t.Run("cancel a sleeping job", func(t *testing.T) {
		t.Parallel()
		a := api{t: t, url: d.url, token: d.token}
		id := a.do("POST", "/api/w/default/jobs/run/hello/sleep", `{"seconds":60}`).want(t, http.StatusCreated)["id"].(string)
		a.waitStatus(devWS, id, 30*time.Second, "running")
		waitProcess(t, id, true)
		r := cli(t, d.url, d.token, "jobs", "cancel", id, "--reason", "e2e")
		if r.code != 0 {
			t.Fatalf("jobs cancel: exit %d %s", r.code, r.stderr)
		}
		j := a.waitStatus(devWS, id, 30*time.Second, "canceled")
		if j["canceled_reason"] != "e2e" {
			t.Fatalf("canceled job %v", j)
		}
		waitProcess(t, id, false)
	})
	t.Run("error table writes nothing", func(t *testing.T) {
		t.Parallel()
		testErrorTable(t, api{t: t, url: d.url, token: d.token})
	})
	t.Run("tokens and scopes", func(t *testing.T) {
		t.Parallel()
		testScopes(t, d)
	})
	t.Run("webhook HMAC", func(t *testing.T) {
		t.Parallel()
		testWebhookHMAC(t, api{t: t, url: d.url, token: d.token})
	})
	_ = a
}

// TestDevSecondInterruptExitsAtOnce: the first Ctrl-C drains (a running
// job gets the drain grace, here a minute); the second ends the process
// without waiting for it.
func TestDevSecondInterruptExitsAtOnce(t *testing.T) {
	t.Parallel()
	d := startDev(t, filepath.Join(t.TempDir(), "state"), "WINDFORCE_DRAIN_GRACE=60s")
	a := d.api(t)
	id := a.do("POST", "/api/w/default/jobs/run/hello/sleep", `{"seconds":120}`).want(t, http.StatusCreated)["id"].(string)
	a.waitStatus(devWS, id, 30*time.Second, "running")
	_ = d.proc.cmd.Process.Signal(os.Interrupt)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(d.proc.stderr.String(), "interrupt again") {
		if time.Now().After(deadline) {
			t.Fatalf("no stopping notice within 30s of SIGINT; stderr:\n%s", tail(d.proc.stderr.String(), 2000))
		}
		time.Sleep(20 * time.Millisecond) // polling the process's output
	}
	_ = d.proc.cmd.Process.Signal(os.Interrupt)
	select {
	case <-d.proc.done:
	case <-time.After(20 * time.Second):
		t.Fatal("windforce dev still draining 20s after a second SIGINT (the drain grace is 60s)")
	}
}

// stop ends the process with SIGTERM and waits for it.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("windforce did not stop within 30s of SIGINT")
	}
}

// lastJSON returns the last line of out that looks like a JSON object, or
// the whole trimmed output.
func lastJSON(out string) string {
	out = strings.TrimSpace(out)
	if i := strings.LastIndex(out, "\n{"); i >= 0 {
		return out[i+1:]
	}
	return out
}

// jobTotal counts the workspace's jobs through the job list.
func jobTotal(a api) int {
	a.t.Helper()
	out := a.do("GET", "/api/w/default/jobs?limit=500", "").want(a.t, http.StatusOK)
	return len(out["jobs"].([]any))
}

// testErrorTable checks DESIGN §4's error table: each refusal answers its
// status and error code and creates no job.
func testErrorTable(t *testing.T, a api) {
	done := a.do("POST", "/api/w/default/jobs/run/hello/greet?wait=30s", `{"name":"x"}`).want(t, http.StatusOK)
	before := jobTotal(a)
	run := "/api/w/default/jobs/run/hello/greet"
	cases := []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"bad JSON", "POST", run, `{"name":`, 400, "bad_request"},
		{"invalid UTF-8", "POST", run, "{\"name\":\"\xff\"}", 400, "bad_request"},
		{"over the size limit", "POST", run, `{"name":"` + strings.Repeat("a", 2<<20) + `"}`, 413, "payload_too_large"},
		{"schema mismatch", "POST", run, `{"name":5}`, 422, "invalid_input"},
		{"unknown app", "POST", "/api/w/default/jobs/run/nope/greet", `{}`, 404, "not_found"},
		{"unknown action", "POST", "/api/w/default/jobs/run/hello/nope", `{}`, 404, "not_found"},
		{"unknown job", "GET", "/api/w/default/jobs/01a22c2a-d3e8-78f6-b4ac-7e6883081409", "", 404, "not_found"},
		{"cancel finished", "POST", "/api/w/default/jobs/" + done["id"].(string) + "/cancel", `{"reason":"late"}`, 409, "conflict"},
	}
	for _, c := range cases {
		r := a.do(c.method, c.path, c.body)
		body := r.want(t, c.status)
		e, _ := body["error"].(map[string]any)
		if e == nil || e["code"] != c.code || e["message"] == "" {
			t.Errorf("%s: body %s, want error code %s", c.name, r.body, c.code)
		}
		if c.code == "invalid_input" && !strings.Contains(string(r.body), "/name") {
			t.Errorf("%s: body %s names no JSON pointer", c.name, r.body)
		}
	}
	if after := jobTotal(a); after != before {
		t.Fatalf("refused requests created jobs: %d before, %d after", before, after)
	}
}

// testScopes: no or bad token 401; a read token reads but cannot run; a
// run token cannot reopen (operator only).
func testScopes(t *testing.T, d *devServer) {
	anon := api{t: t, url: d.url}
	anon.do("GET", "/api/w/default/jobs", "").want(t, http.StatusUnauthorized)
	api{t: t, url: d.url, token: "wft_nope"}.do("GET", "/api/w/default/jobs", "").want(t, http.StatusUnauthorized)
	mint := func(scopes string) string {
		r := cli(t, d.url, d.token, "token", "create", "--workspace", "default", "--scopes", scopes, "--json")
		var out struct{ Token string }
		if r.code != 0 || json.Unmarshal([]byte(lastJSON(r.stdout)), &out) != nil || out.Token == "" {
			t.Fatalf("token create %s: exit %d %q %s", scopes, r.code, r.stdout, r.stderr)
		}
		return out.Token
	}
	reader := api{t: t, url: d.url, token: mint("read")}
	reader.do("GET", "/api/w/default/jobs", "").want(t, http.StatusOK)
	reader.do("POST", "/api/w/default/jobs/run/hello/greet", `{"name":"x"}`).want(t, http.StatusForbidden)
	runner := api{t: t, url: d.url, token: mint("run")}
	failed := runner.do("POST", "/api/w/default/jobs/run/hello/fail?wait=30s", `{}`).want(t, http.StatusOK)
	runner.do("POST", "/api/w/default/jobs/"+failed["id"].(string)+"/reopen", `{}`).want(t, http.StatusForbidden)
	api{t: t, url: d.url, token: mint("read")}.do("GET", "/api/w/other/jobs", "").want(t, http.StatusForbidden)
}

// waitProcess polls /proc until a process of job id is present (or gone),
// recognized by the WF_JOB_ID the runner sets in every job process.
func waitProcess(t *testing.T, id string, present bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for jobProcessAlive(id) != present {
		if time.Now().After(deadline) {
			t.Fatalf("job %s process present=%v after 30s, want %v", id, !present, present)
		}
		time.Sleep(pollEvery)
	}
}

func jobProcessAlive(id string) bool {
	dirs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, p := range dirs {
		data, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(data), "WF_JOB_ID="+id+"\x00") {
			return true
		}
	}
	return false
}

// testWebhookHMAC: a signed request makes a webhook job; a tampered body,
// a stale timestamp and a replay of a good signature are refused and make
// nothing.
func testWebhookHMAC(t *testing.T, admin api) {
	secret := admin.do("POST", "/api/w/default/webhooks/hello/greet/secret", "").want(t, http.StatusCreated)["secret"].(string)
	anon := api{t: t, url: admin.url}
	hook := "/api/w/default/webhooks/hello/greet"
	post := func(body, sig, ts string) reply {
		return anon.do("POST", hook, body, "X-Windforce-Signature", sig, "X-Windforce-Timestamp", ts)
	}
	now := strconv.FormatInt(time.Now().Unix(), 10)
	body := `{"name":"Hook"}`
	good := hmacHex(secret, now+"."+body)
	id := post(body, good, now).want(t, http.StatusCreated)["id"].(string)
	j := admin.waitStatus(devWS, id, 30*time.Second, "success")
	if j["trigger_kind"] != "webhook" {
		t.Fatalf("webhook job %v", j)
	}
	before := jobTotal(admin)
	post(`{"name":"Evil"}`, good, now).want(t, http.StatusUnauthorized)
	stale := strconv.FormatInt(time.Now().Add(-10*time.Minute).Unix(), 10)
	post(body, hmacHex(secret, stale+"."+body), stale).want(t, http.StatusUnauthorized)
	post(body, good, now).want(t, http.StatusConflict)
	if after := jobTotal(admin); after != before {
		t.Fatalf("refused webhooks created jobs: %d before, %d after", before, after)
	}
}

func hmacHex(secret, msg string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(msg))
	return hex.EncodeToString(mac.Sum(nil))
}
