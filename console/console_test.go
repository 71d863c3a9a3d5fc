package console_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// newToken stores an API token and returns its text.
func (e *env) newToken(workspace string, scopes ...auth.Scope) (string, auth.Token) {
	e.t.Helper()
	text, tok, err := auth.NewToken(workspace, "t-"+string(scopes[0]), scopes)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.db.CreateToken(e.t.Context(), tok); err != nil {
		e.t.Fatal(err)
	}
	return text, tok
}

// enqueue runs an action through the one enqueue path (no worker runs,
// so the job waits).
func (e *env) enqueue(action, input string) uuid.UUID {
	e.t.Helper()
	res, err := e.db.EnqueueAction(e.t.Context(), catalog.EnqueueRequest{Workspace: ws, App: "hello", Action: action,
		TriggerKind: spine.TriggerAPI, CreatedBy: "test", Input: []byte(input)})
	if err != nil {
		e.t.Fatal(err)
	}
	return res.ID
}

// TestLoginSessionAndPages logs in with the bootstrap admin token and
// with a stored token, checks the session cookie's attributes, and loads
// every page; a wrong token is refused and an anonymous visitor is sent
// to the login page.
func TestLoginSessionAndPages(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		anon := e.browser()
		anon.get("/w/ws/runs").toLogin()
		anon.get("/").toLogin()
		anon.get("/login").want(200).contains(`name="token"`, `type="password"`)
		anon.do("POST", "/login", url.Values{"token": {"nope"}}).want(http.StatusUnauthorized).contains("Unknown or revoked token")

		b := e.browser()
		p := b.do("POST", "/login", url.Values{"token": {adminToken}, "next": {"/w/ws/sources"}})
		if p.status != http.StatusSeeOther || p.location != "/w/ws/sources" {
			t.Fatalf("login answered %d to %q", p.status, p.location)
		}
		ck := p.header.Get("Set-Cookie")
		for _, attr := range []string{"wf_session=", "HttpOnly", "SameSite=Strict", "Path=/"} {
			if !strings.Contains(ck, attr) {
				t.Fatalf("session cookie %q lacks %s", ck, attr)
			}
		}
		if strings.Contains(ck, adminToken) {
			t.Fatalf("session cookie holds the token text: %q", ck)
		}
		id := e.enqueue("greet", `{"name":"Ada"}`)
		b.get("/w/ws/runs").want(200).contains("hello/greet", "queued", id.String()[28:], `hx-trigger="every 2s"`)
		b.get("/w/ws/jobs/"+id.String()).want(200).contains("Ada", "Pinned at enqueue", "Cancel job", "created")
		b.get("/w/ws/apps").want(200).contains("hello/greet", "hello/sleep", "Source main")
		b.get("/w/ws/apps/hello/greet").want(200).contains(`name="/name"`, "Run greet", "who to greet")
		b.get("/w/ws/sources").want(200).contains(e.repo.URL, "Sync now", "synced")
		b.get("/w/ws/schedules").want(200).contains("New schedule", "hello/greet")
		b.get("/w/ws/health").want(200).contains("Waiting", "<svg", "By tag")
		b.get("/w/ws/jobs/" + uuid.NewString()).want(http.StatusNotFound)
		b.get("/w/ws/nowhere").want(http.StatusNotFound)

		// A stored run-scoped token of ws lands on its own workspace.
		text, _ := e.newToken(ws, auth.ScopeRead)
		rb := e.browser()
		p = rb.do("POST", "/login", url.Values{"token": {text}})
		if p.location != "/w/ws/runs" {
			t.Fatalf("read token landed on %q", p.location)
		}
	})
}

// TestAPIRoutesKeepPrecedence: the console at "/" does not swallow the
// API's routes.
func TestAPIRoutesKeepPrecedence(t *testing.T) {
	t.Parallel()
	e := newSQLiteEnv(t)
	b := e.browser()
	b.get("/healthz").want(200).contains(`"status":"ok"`)
	b.get("/readyz").want(200).contains("ready")
	b.get("/api/nothing").want(404).contains(`"code":"not_found"`)
	b.get("/api/w/ws/jobs/x").want(401)
	b.get("/static/htmx.min.js").want(200)
	b.get("/static/style.css").want(200).contains("--focus")
	if p := b.get("/metrics"); p.status != 200 || strings.Contains(p.body, "<html") {
		t.Fatalf("/metrics answered %d: %.200s", p.status, p.body)
	}
}

// TestCSRF: every POST needs the session's CSRF token, as a form field
// or the X-CSRF-Token header htmx sends; without it nothing happens.
func TestCSRF(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		b := e.browser()
		b.login(adminToken)
		id := e.enqueue("greet", `{"name":"Ada"}`)
		cancel := "/w/ws/jobs/" + id.String() + "/cancel"
		b.do("POST", cancel, url.Values{}).want(http.StatusForbidden).contains("CSRF")
		b.do("POST", cancel, url.Values{"csrf": {"0123abcd"}}).want(http.StatusForbidden)
		b.do("POST", "/w/ws/apps/hello/greet/run", url.Values{"/name": {"Eve"}}).want(http.StatusForbidden)
		if j := e.job(id); j.Status != spine.StatusQueued {
			t.Fatalf("job %s after refused cancels", j.Status)
		}
		b.do("POST", "/logout", url.Values{}).want(http.StatusForbidden)
		// The header form, as htmx sends it.
		p := b.do("POST", cancel, url.Values{}, "X-CSRF-Token", b.csrf)
		if p.status != http.StatusSeeOther {
			t.Fatalf("cancel with header answered %d: %s", p.status, p.body)
		}
		if j := e.job(id); j.Status != spine.StatusCanceled {
			t.Fatalf("job %s after cancel", j.Status)
		}
		b.post("/logout", nil).toLogin()
		b.get("/w/ws/runs").toLogin()
	})
}

func (e *env) job(id uuid.UUID) spine.Job {
	e.t.Helper()
	j, err := e.db.GetJob(e.t.Context(), ws, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

// TestSessionTamperingAndExpiry: a cookie whose payload or signature was
// changed, one signed with another secret, and an expired one are all
// refused.
func TestSessionTamperingAndExpiry(t *testing.T) {
	t.Parallel()
	e := newSQLiteEnv(t)
	text, _ := e.newToken(ws, auth.ScopeRead)
	b := e.browser()
	b.login(text)
	u, _ := url.Parse(e.url)
	cookie := b.c.Jar.Cookies(u)[0]
	body, sig, _ := strings.Cut(cookie.Value, ".")
	set := func(v string) {
		b.c.Jar.SetCookies(u, []*http.Cookie{{Name: "wf_session", Value: v, Path: "/"}})
	}
	// Swap one payload character: the signature no longer matches.
	flip := []byte(body)
	flip[3] ^= 1
	for _, v := range []string{string(flip) + "." + sig, body + "." + sig[:len(sig)-2] + "AA", body, "garbage"} {
		set(v)
		b.get("/w/ws/runs").toLogin()
	}
	set(cookie.Value)
	b.get("/w/ws/runs").want(200)
	e.clock.set(time.Now().Add(13 * time.Hour))
	b.get("/w/ws/runs").toLogin()
}

// TestRevokedTokenLogsOut: the session names the token's hash and every
// request looks it up again, so revocation ends the session at once.
func TestRevokedTokenLogsOut(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		text, tok := e.newToken(ws, auth.ScopeRead, auth.ScopeRun)
		b := e.browser()
		b.login(text)
		b.get("/w/ws/runs").want(200)
		if err := e.db.RevokeToken(t.Context(), tok.ID); err != nil {
			t.Fatal(err)
		}
		b.get("/w/ws/runs").toLogin()
		b.post("/w/ws/apps/hello/greet/run", url.Values{"/name": {"Eve"}}).toLogin()
		p := b.do("GET", "/w/ws/runs", nil, "HX-Request", "true")
		if p.header.Get("HX-Redirect") != "/login" {
			t.Fatalf("htmx request after revocation: %d %v", p.status, p.header)
		}
	})
}

// TestScopes: the console checks the API's scopes: read to view, run to
// run and cancel, operator to reopen, admin for sources and schedules,
// and a token only in its own workspace.
func TestScopes(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		id := e.enqueue("greet", `{"name":"Ada"}`)
		readText, _ := e.newToken(ws, auth.ScopeRead)
		r := e.browser()
		r.login(readText)
		r.get("/w/ws/runs").want(200)
		job := r.get("/w/ws/jobs/" + id.String()).want(200)
		if strings.Contains(job.body, "Cancel job") || strings.Contains(job.body, "Run again") {
			t.Fatal("a read token is offered cancel or run again")
		}
		r.get("/w/ws/apps/hello/greet").want(200).contains("lacks the run scope")
		r.post("/w/ws/apps/hello/greet/run", url.Values{"/name": {"Eve"}}).want(http.StatusForbidden)
		r.post("/w/ws/jobs/"+id.String()+"/cancel", nil).want(http.StatusForbidden)
		r.post("/w/ws/sources/main/sync", nil).want(http.StatusForbidden)
		r.post("/w/ws/schedules", url.Values{"target": {"hello/greet"}, "cron": {"* * * * *"}}).want(http.StatusForbidden)
		r.get("/w/other/runs").want(http.StatusForbidden)

		runText, _ := e.newToken(ws, auth.ScopeRun, auth.ScopeRead)
		rn := e.browser()
		rn.login(runText)
		rn.post("/w/ws/jobs/"+id.String()+"/cancel", nil).want(http.StatusSeeOther)
		rn.post("/w/ws/jobs/"+id.String()+"/reopen", url.Values{"force": {"1"}}).want(http.StatusForbidden)
		rn.post("/w/ws/sources/main/sync", nil).want(http.StatusForbidden)

		opText, _ := e.newToken(ws, auth.ScopeOperator, auth.ScopeRead)
		op := e.browser()
		op.login(opText)
		op.get("/w/ws/jobs/" + id.String()).want(200).contains("Reopen (force)")
		op.post("/w/ws/jobs/"+id.String()+"/reopen", url.Values{"force": {"1"}, "reason": {"try again"}}).want(http.StatusSeeOther)
		if j := e.job(id); j.Status != spine.StatusQueued {
			t.Fatalf("reopened job is %s", j.Status)
		}
		op.get("/w/ws/jobs/"+id.String()).want(200).contains("reopen", "try again")
	})
}

// TestRunForm: the generated form enqueues a manual job; a value the
// schema refuses is shown next to its field and enqueues nothing; raw
// JSON mode sends the JSON as it is.
func TestRunForm(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		b := e.browser()
		b.login(adminToken)
		bad := b.post("/w/ws/apps/hello/greet/run", url.Values{"/name": {""}}).want(http.StatusUnprocessableEntity)
		bad.contains(`aria-invalid="true"`, `name="/name"`)
		if n := e.count(); n != 0 {
			t.Fatalf("%d jobs after a refused run", n)
		}
		p := b.post("/w/ws/apps/hello/greet/run", url.Values{"/name": {"Grace"}})
		if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/w/ws/jobs/") {
			t.Fatalf("run answered %d to %q: %s", p.status, p.location, p.body)
		}
		id := uuid.MustParse(strings.TrimPrefix(p.location, "/w/ws/jobs/"))
		j := e.job(id)
		if j.TriggerKind != spine.TriggerManual || string(j.Input) != `{"name":"Grace"}` || j.CreatedBy != "token:admin" {
			t.Fatalf("manual run: trigger %s input %s by %s", j.TriggerKind, j.Input, j.CreatedBy)
		}
		raw := b.post("/w/ws/apps/hello/greet/run", url.Values{"__raw_mode": {"1"}, "__raw": {`{"name": "Raw"}`}})
		if raw.status != http.StatusSeeOther {
			t.Fatalf("raw run answered %d: %s", raw.status, raw.body)
		}
		b.post("/w/ws/apps/hello/greet/run", url.Values{"__raw_mode": {"1"}, "__raw": {`{"name":`}}).
			want(http.StatusUnprocessableEntity).contains("not valid JSON")
		b.post("/w/ws/apps/hello/greet/run", url.Values{"__raw_mode": {"1"}, "__raw": {`{"name": "\ud800"}`}}).
			want(http.StatusUnprocessableEntity).contains("lone UTF-16 surrogate")
		// htmx: 200 with the outcome block that polls the job.
		hx := b.do("POST", "/w/ws/apps/hello/greet/run", url.Values{"/name": {"Hx"}}, "HX-Request", "true", "X-CSRF-Token", b.csrf)
		hx.want(200).contains(`id="outcome"`, "/outcome?poll=")
		b.get("/w/ws/runs?trigger=manual").want(200).contains(id.String()[28:], "manual")
		if n := e.count(); n != 3 {
			t.Fatalf("%d jobs, want 3", n)
		}
	})
}

// count counts the workspace's jobs.
func (e *env) count() int64 {
	e.t.Helper()
	c, err := e.db.CountJobs(e.t.Context(), ws)
	if err != nil {
		e.t.Fatal(err)
	}
	var n int64
	for _, v := range c {
		n += v
	}
	return n
}

// TestRunsFiltersAndPaging: filters narrow the listing and the cursor
// pages through it without repeats.
func TestRunsFiltersAndPaging(t *testing.T) {
	t.Parallel()
	e := newSQLiteEnv(t)
	for i := range 55 {
		e.enqueue("greet", `{"name":"n`+itoa(i)+`"}`)
	}
	e.enqueue("sleep", `{"seconds":1}`)
	b := e.browser()
	b.login(adminToken)
	b.get("/w/ws/runs?action=sleep").want(200).contains("hello/sleep")
	if p := b.get("/w/ws/runs?action=sleep"); strings.Contains(p.body, "hello/greet</a>") {
		t.Fatal("the action filter kept greet jobs")
	}
	b.get("/w/ws/runs?status=bogus").want(http.StatusBadRequest)
	first := b.get("/w/ws/runs?action=greet").want(200)
	if n := strings.Count(first.body, "<tr>") - 1; n != 50 {
		t.Fatalf("first page holds %d rows", n)
	}
	m := nextRE.FindStringSubmatch(first.body)
	if m == nil {
		t.Fatal("no next page link")
	}
	second := b.get(strings.ReplaceAll(m[1], "&amp;", "&")).want(200)
	if n := strings.Count(second.body, "<tr>") - 1; n != 5 {
		t.Fatalf("second page holds %d rows", n)
	}
	b.get("/w/ws/runs?status=success").want(200).contains("No job matches these filters")
}

// TestHealthChart: completions of the last hour land in the chart's
// current minute, per status, and the totals are printed as text.
func TestHealthChart(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		e.enqueue("greet", `{"name":"a"}`)
		e.enqueue("greet", `{"name":"b"}`)
		cancel := e.enqueue("greet", `{"name":"c"}`)
		if _, err := e.db.Cancel(t.Context(), spine.CancelParams{Workspace: ws, JobID: cancel, By: "test"}); err != nil {
			t.Fatal(err)
		}
		claimed, err := e.db.Claim(t.Context(), spine.ClaimParams{Worker: "w", Tags: []string{spine.DefaultTag}, Limit: 2})
		if err != nil || len(claimed) != 2 {
			t.Fatalf("claim: %d jobs, %v", len(claimed), err)
		}
		if _, err := e.db.Complete(t.Context(), spine.CompleteParams{Lease: spine.Lease{JobID: claimed[0].ID, ClaimToken: claimed[0].ClaimToken}, Result: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.Fail(t.Context(), spine.FailParams{Lease: spine.Lease{JobID: claimed[1].ID, ClaimToken: claimed[1].ClaimToken}, Error: spine.JobError{Message: "boom"}}); err != nil {
			t.Fatal(err)
		}
		b := e.browser()
		b.login(adminToken)
		p := b.get("/w/ws/health").want(200)
		p.contains("✓ success 1", "✕ failure 1", "⊘ canceled 1", "3 in the hour", `class="bar-success"`, `class="bar-failure"`)
	})
}

// TestWorkspaceSwitcher: an all-workspace token may open any workspace
// and the switcher remembers the recent ones; a single-workspace token
// is offered only its own. A cross-site login post is refused.
func TestWorkspaceSwitcher(t *testing.T) {
	t.Parallel()
	e := newSQLiteEnv(t)
	b := e.browser()
	b.login(adminToken)
	p := b.get("/switch?ws=team-b")
	if p.status != http.StatusSeeOther || p.location != "/w/team-b/runs" {
		t.Fatalf("switch answered %d to %q", p.status, p.location)
	}
	b.get("/w/team-b/runs").want(200).contains("No runs yet in team-b")
	b.get("/w/ws/runs").want(200).contains(`<option value="team-b">`, `list="ws-list"`)
	b.get("/switch?ws=a/b").want(http.StatusBadRequest)

	text, _ := e.newToken(ws, auth.ScopeRead)
	r := e.browser()
	r.login(text)
	r.get("/w/ws/runs").want(200).contains(`<select id="ws-switch" name="ws"><option selected>ws</option></select>`)

	x := e.browser()
	x.do("POST", "/login", url.Values{"token": {adminToken}}, "Sec-Fetch-Site", "cross-site").want(http.StatusForbidden)
	x.do("POST", "/login", url.Values{"token": {adminToken}}, "Origin", "https://evil.example").want(http.StatusForbidden)
	x.get("/w/ws/runs").toLogin()
	if p := x.do("POST", "/login", url.Values{"token": {adminToken}, "next": {"//evil.example/x"}}); p.location != "/w/ws/runs" {
		t.Fatalf("login with a foreign next went to %q", p.location)
	}
}

// TestRunFormLimits: an input over WINDFORCE_MAX_INPUT_BYTES is refused
// with a message and no job, and a form body far over it is 413 before
// it is read whole.
func TestRunFormLimits(t *testing.T) {
	t.Parallel()
	e := newSQLiteEnv(t)
	b := e.browser()
	b.login(adminToken)
	big := strings.Repeat("x", 1<<20+10)
	b.post("/w/ws/apps/hello/greet/run", url.Values{"/name": {big}}).want(http.StatusUnprocessableEntity).contains("over the limit of 1048576 bytes")
	huge := strings.Repeat("y", 4<<20)
	b.post("/w/ws/apps/hello/greet/run", url.Values{"/name": {huge}}).want(http.StatusRequestEntityTooLarge)
	if n := e.count(); n != 0 {
		t.Fatalf("%d jobs after refused runs", n)
	}
}

// TestLiveFragments: the outcome block polls until the job finishes or
// about 5 s passed; the logs block keeps its poller only while the job
// is live; the job page refreshes itself only while live.
func TestLiveFragments(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		b := e.browser()
		b.login(adminToken)
		id := e.enqueue("greet", `{"name":"Ada"}`).String()
		b.get("/w/ws/jobs/"+id+"/outcome?poll=0").want(200).contains("outcome?poll=1", "Waiting for the result")
		b.get("/w/ws/jobs/"+id+"/outcome?poll=15").want(200).contains("Still queued", "follow the job")
		b.get("/w/ws/jobs/"+id+"/logs?after=0").want(200).contains(`id="log-poll"`, "logs?after=0")
		b.get("/w/ws/jobs/" + id).want(200).contains(`hx-select="#job-live"`)
		b.post("/w/ws/jobs/"+id+"/cancel", nil).want(http.StatusSeeOther)
		b.get("/w/ws/jobs/" + id + "/logs?after=0").want(200).contains(`id="log-end"`)
		out := b.get("/w/ws/jobs/"+id+"/outcome?poll=3").want(200).contains("canceled", "Open the job")
		if strings.Contains(out.body, "hx-get") {
			t.Fatal("a finished outcome still polls")
		}
		if p := b.get("/w/ws/jobs/" + id).want(200); strings.Contains(p.body, `hx-select="#job-live"`) {
			t.Fatal("a finished job page still refreshes")
		}
		b.post("/w/ws/jobs/"+id+"/cancel", nil).want(http.StatusConflict)
		b.get("/w/ws/jobs/not-a-uuid").want(http.StatusNotFound)
	})
}

// TestJobPageLiveBlockWokenByCompletion: the job page's live status block
// (hx-get …?hold=1 on load) is held while the job is live and answered
// by the job's completion, not by a poll: the console's LiveHold is an
// hour in these tests.
func TestJobPageLiveBlockWokenByCompletion(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		b := e.browser()
		b.login(adminToken)
		id := e.enqueue("greet", `{"name":"Ada"}`).String()
		b.get("/w/ws/jobs/"+id).want(200).contains(`hx-get="/w/ws/jobs/`+id+`?hold=1"`, `hx-trigger="load"`)
		held := e.browser()
		held.login(adminToken)
		type answer struct {
			status int
			body   string
			err    error
		}
		got := make(chan answer, 1)
		go func() {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/w/ws/jobs/"+id+"?hold=1", nil)
			req.Header.Set("HX-Request", "true")
			req.Header.Set("HX-Target", "job-live")
			res, err := held.c.Do(req)
			if err != nil {
				got <- answer{err: err}
				return
			}
			defer res.Body.Close()
			data, err := io.ReadAll(res.Body)
			got <- answer{status: res.StatusCode, body: string(data), err: err}
		}()
		b.post("/w/ws/jobs/"+id+"/cancel", nil).want(http.StatusSeeOther)
		a := <-got
		if a.err != nil || a.status != 200 || !strings.Contains(a.body, "canceled") || strings.Contains(a.body, "hold=1") {
			t.Fatalf("held live block: %d %v, want the canceled job with no further refresh:\n%.400s", a.status, a.err, a.body)
		}
	})
}
