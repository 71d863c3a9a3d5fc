package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/windforce/windforce/auth"
)

// DefaultWorkspace is where an all-workspace token lands when it has no
// recent workspace and no workspace has a source yet.
const DefaultWorkspace = "default"

// loginPage shows the login form; a logged-in visitor goes home.
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	u, err := c.authenticate(w, r)
	if err == nil && u != nil {
		http.Redirect(w, r, c.home(r, u), http.StatusSeeOther)
		return
	}
	c.render(w, http.StatusOK, "login", "", view{Title: "Log in", D: loginData{Next: safeNext(r.URL.Query().Get("next"))}})
}

type loginData struct {
	Next  string
	Error string
}

// login checks the token the way the API does (the bootstrap admin token,
// or its hash among the stored live tokens) and starts a server-side
// session whose id the cookie carries.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if !sameOrigin(r) {
		http.Error(w, "login refused: the form did not come from this console", http.StatusForbidden)
		return
	}
	text := strings.TrimSpace(r.PostFormValue("token"))
	next := safeNext(r.PostFormValue("next"))
	fail := func(status int, msg string) {
		c.render(w, status, "login", "", view{Title: "Log in", D: loginData{Next: next, Error: msg}})
	}
	if text == "" {
		fail(http.StatusUnauthorized, "Enter an API token.")
		return
	}
	hash := auth.Hash(text)
	tok, err := c.lookup(r, hash)
	if errors.Is(err, auth.ErrNotFound) {
		fail(http.StatusUnauthorized, "Unknown or revoked token.")
		return
	}
	if err != nil {
		c.errorPage(w, r, nil, err)
		return
	}
	s, row, err := newSession(tok, c.now(), c.cfg.SessionTTL)
	if err == nil {
		err = c.cfg.Store.CreateSession(r.Context(), row)
	}
	if err == nil {
		err = c.setSession(w, r, s)
	}
	if err != nil {
		c.errorPage(w, r, nil, err)
		return
	}
	if next == "" {
		next = c.home(r, &user{token: tok, sess: s})
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logout ends the session server-side (POST with the session's CSRF
// token), so a copy of the cookie is refused from then on, and clears the
// cookie.
func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	u, err := c.authenticate(w, r)
	if err == nil && u != nil {
		if !checkCSRF(r, u.sess) {
			http.Error(w, "logout refused: CSRF check failed", http.StatusForbidden)
			return
		}
		if err := c.cfg.Store.EndSession(r.Context(), auth.Hash(u.sess.ID), c.now()); err != nil {
			c.errorPage(w, r, nil, fmt.Errorf("log out: %w", err))
			return
		}
	}
	clearSession(w, r)
	redirect(w, r, "/login")
}

// root sends a visitor to their home workspace's runs, or to the login.
func (c *Console) root(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		c.errorPage(w, r, nil, &pageError{status: http.StatusNotFound, msg: "No console page at " + r.URL.Path + "."})
		return
	}
	u, err := c.authenticate(w, r)
	if err != nil {
		c.errorPage(w, r, nil, err)
		return
	}
	if u == nil {
		toLogin(w, r)
		return
	}
	http.Redirect(w, r, c.home(r, u), http.StatusSeeOther)
}

// switchWorkspace is the workspace switcher's target: GET ?ws=NAME.
func (c *Console) switchWorkspace(w http.ResponseWriter, r *http.Request) {
	ws := strings.TrimSpace(r.URL.Query().Get("ws"))
	if !validWorkspace(ws) {
		c.errorPage(w, r, nil, &pageError{status: http.StatusBadRequest, msg: "A workspace name is letters, digits, - and _, without spaces or slashes."})
		return
	}
	http.Redirect(w, r, "/w/"+url.PathEscape(ws)+"/runs", http.StatusSeeOther)
}

// home is the runs page of the user's workspace: a single-workspace
// token's own; for an all-workspace token the last one visited, else the
// first with a source, else DefaultWorkspace.
func (c *Console) home(r *http.Request, u *user) string {
	ws := u.token.Workspace
	if u.allWorkspaces() {
		ws = DefaultWorkspace
		if len(u.sess.Recent) > 0 {
			ws = u.sess.Recent[0]
		} else if all := c.knownWorkspaces(r); len(all) > 0 {
			ws = all[0]
		}
	}
	return "/w/" + url.PathEscape(ws) + "/runs"
}

// knownWorkspaces lists the workspaces that have a source, sorted.
func (c *Console) knownWorkspaces(r *http.Request) []string {
	srcs, err := c.cfg.Store.ListSources(r.Context(), "")
	if err != nil {
		c.log.Warn("console: list workspaces", "err", err)
		return nil
	}
	var out []string
	for _, s := range srcs {
		if !slices.Contains(out, s.Workspace) {
			out = append(out, s.Workspace)
		}
	}
	slices.Sort(out)
	return out
}

// workspaces are the switcher's choices: the token's own workspace, or
// for an all-workspace token the recent ones and those with a source.
func (c *Console) workspaces(q *req) []string {
	if !q.u.allWorkspaces() {
		return []string{q.u.token.Workspace}
	}
	out := []string{q.ws}
	for _, ws := range append(slices.Clone(q.u.sess.Recent), c.knownWorkspaces(q.r)...) {
		if !slices.Contains(out, ws) {
			out = append(out, ws)
		}
	}
	return out
}

// safeNext keeps a post-login redirect on this console (a path, never
// another host). Browsers drop tabs and newlines from URLs and read "\" as
// "/", so "/\t/evil.example" would become "//evil.example": any control
// character, space or backslash is refused, and what passes must parse
// as a bare path.
func safeNext(next string) string {
	if strings.IndexFunc(next, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '\\' }) >= 0 {
		return ""
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil ||
		!strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		return ""
	}
	return next
}

// sameOrigin refuses a cross-site POST where the browser says where it
// came from (Origin, or Sec-Fetch-Site). Requests without either (curl,
// old browsers) pass: the login form holds no session to forge.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	if o := r.Header.Get("Origin"); o != "" {
		// "null" is an opaque origin (a sandboxed frame, a data: page):
		// never this console.
		u, err := url.Parse(o)
		return err == nil && u.Host == r.Host
	}
	return true
}
