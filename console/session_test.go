package console_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/windforce/windforce/auth"
)

// sessionCookie is b's session cookie, for copying into another browser.
func (b *browser) sessionCookie() *http.Cookie {
	b.e.t.Helper()
	u, _ := url.Parse(b.e.url)
	for _, ck := range b.c.Jar.Cookies(u) {
		if ck.Name == "wf_session" {
			return ck
		}
	}
	b.e.t.Fatal("no session cookie")
	return nil
}

// thief is a browser holding a copy of the session cookie ck and b's
// CSRF token.
func (b *browser) thief(ck *http.Cookie) *browser {
	b.e.t.Helper()
	u, _ := url.Parse(b.e.url)
	t := b.e.browser()
	t.c.Jar.SetCookies(u, []*http.Cookie{{Name: ck.Name, Value: ck.Value, Path: "/"}})
	t.csrf = b.csrf
	return t
}

// sessionRow is the store's row of the session of cookie ck, read by the
// hash of the id the cookie carries.
func (e *env) sessionRow(ck *http.Cookie) auth.Session {
	e.t.Helper()
	body, _, _ := strings.Cut(ck.Value, ".")
	data, err := base64.RawURLEncoding.DecodeString(body)
	var c struct {
		ID string `json:"i"`
	}
	if err == nil {
		err = json.Unmarshal(data, &c)
	}
	if err != nil || c.ID == "" {
		e.t.Fatalf("session cookie payload %q: %v", data, err)
	}
	row, err := e.db.SessionByHash(e.t.Context(), auth.Hash(c.ID))
	if err != nil {
		e.t.Fatalf("session row: %v", err)
	}
	return row
}

// TestLogoutEndsSession: logout ends the session server-side, so a copy
// of the cookie taken before is refused afterwards (GET and POST), for a
// stored token and the bootstrap admin token alike; the session's row is
// marked ended.
func TestLogoutEndsSession(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		stored, _ := e.newToken(ws, auth.ScopeRead, auth.ScopeRun)
		for _, token := range []string{stored, adminToken} {
			b := e.browser()
			b.login(token)
			ck := b.sessionCookie()
			thief := b.thief(ck)
			thief.get("/w/ws/runs").want(http.StatusOK)
			if row := e.sessionRow(ck); !row.EndedAt.IsZero() || row.TokenHash != auth.Hash(token) {
				t.Fatalf("session row before logout %+v", row)
			}
			b.post("/logout", nil).toLogin()
			b.get("/w/ws/runs").toLogin()
			thief.get("/w/ws/runs").toLogin()
			thief = b.thief(ck) // the refused answer cleared the thief's copy
			thief.post("/w/ws/apps/hello/greet/run", url.Values{"/name": {"Eve"}}).toLogin()
			if n := e.count(); n != 0 {
				t.Fatalf("%d jobs after a run with a logged-out cookie", n)
			}
			if row := e.sessionRow(ck); row.EndedAt.IsZero() {
				t.Fatalf("session row after logout %+v", row)
			}
		}
	})
}

// TestRevokeEndsSessionRow: revoking a token through the API marks its
// console sessions ended (besides the token lookup failing), and a copy
// of the cookie is refused.
func TestRevokeEndsSessionRow(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		text, tok := e.newToken(ws, auth.ScopeRead)
		b := e.browser()
		b.login(text)
		ck := b.sessionCookie()
		thief := b.thief(ck)
		req, err := http.NewRequestWithContext(t.Context(), "DELETE", e.url+"/api/tokens/"+tok.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+adminToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("revoke answered %d", res.StatusCode)
		}
		if row := e.sessionRow(ck); row.EndedAt.IsZero() || row.TokenID != tok.ID {
			t.Fatalf("session row after revocation %+v", row)
		}
		thief.get("/w/ws/runs").toLogin()
	})
}

// TestConsoleRecordsTokenID: the console records the same audit identity
// as the API for the same token, "token:<id>", never its label, even a
// label that reads like the scheduler; the job page shows the label
// beside the identity.
func TestConsoleRecordsTokenID(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		text, tok, err := auth.NewToken(ws, "schedule:x", []auth.Scope{auth.ScopeRead, auth.ScopeRun})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.db.CreateToken(t.Context(), tok); err != nil {
			t.Fatal(err)
		}
		by := "token:" + tok.ID
		b := e.browser()
		b.login(text)
		p := b.post("/w/ws/apps/hello/greet/run", url.Values{"/name": {"Grace"}})
		if p.status != http.StatusSeeOther {
			t.Fatalf("run answered %d: %s", p.status, p.body)
		}
		id := uuid.MustParse(strings.TrimPrefix(p.location, "/w/ws/jobs/"))
		if c := b.post("/w/ws/jobs/"+id.String()+"/cancel", url.Values{"reason": {"r"}}); c.status != http.StatusSeeOther {
			t.Fatalf("cancel answered %d: %s", c.status, c.body)
		}
		j := e.job(id)
		audit, err := e.db.Audit(t.Context(), id)
		if err != nil || j.CreatedBy != by || j.CanceledBy != by || len(audit) != 1 || audit[0].By != by {
			t.Fatalf("job by %q, canceled by %q, audit %+v (%v); want %s", j.CreatedBy, j.CanceledBy, audit, err, by)
		}
		b.get("/w/ws/jobs/" + id.String()).want(http.StatusOK).contains(by + " (label: schedule:x)")

		// The API records the same identity for the same token.
		req, err := http.NewRequestWithContext(t.Context(), "POST", e.url+"/api/w/ws/jobs/run/hello/greet", strings.NewReader(`{"name":"A"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+text)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out struct{ ID uuid.UUID }
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusCreated {
			t.Fatalf("API run answered %d: %v", res.StatusCode, err)
		}
		if api := e.job(out.ID); api.CreatedBy != by {
			t.Fatalf("API job by %q, console job by %q", api.CreatedBy, by)
		}
	})
}
