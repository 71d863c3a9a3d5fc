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

// user is who is logged in: the token the session names, looked up again
// for this request.
type user struct {
	token auth.Token
	sess  session
}

// name is what job rows record as created_by or canceled_by and the audit
// as actor: "token:<id>", exactly as the API records for that token, never
// its free-text label (a label "schedule:x" must not pass for the
// scheduler).
func (u *user) name() string { return u.token.Actor() }

// display is how the layout names the user: the label they chose, else
// the token's audit identity.
func (u *user) display() string {
	if u.token.Label != "" {
		return u.token.Label
	}
	return u.name()
}

// allWorkspaces reports whether the token is valid in every workspace.
func (u *user) allWorkspaces() bool { return u.token.Workspace == auth.AllWorkspaces }

// req is one authenticated console request in a workspace.
type req struct {
	w    http.ResponseWriter
	r    *http.Request
	u    *user
	ws   string
	page string // nav entry to highlight
}

// can reports whether the user holds scope in the request's workspace.
func (q *req) can(scope auth.Scope) bool { return q.u.token.Allows(q.ws, scope) }

// pageFunc is a console page or action. It writes its answer itself (a
// render or a redirect) or returns an error that errorPage renders.
type pageFunc func(q *req) error

// lookup finds the live token of hash: the bootstrap admin token or a
// stored one. auth.ErrNotFound for an unknown or revoked token.
func (c *Console) lookup(r *http.Request, hash string) (auth.Token, error) {
	if c.isAdminHash(hash) {
		return auth.Bootstrap(hash), nil
	}
	tok, err := c.cfg.Store.TokenByHash(r.Context(), hash)
	if err != nil {
		return auth.Token{}, fmt.Errorf("look up session token: %w", err)
	}
	return tok, nil
}

// authenticate reads the session cookie, its server-side row and the
// row's token, all again for this request. nil, nil means "not logged
// in": no cookie, a bad or expired one, a session ended by logout or
// revocation (every copy of the cookie is refused from then on), or a
// revoked token.
func (c *Console) authenticate(w http.ResponseWriter, r *http.Request) (*user, error) {
	ck, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil, nil
	}
	s, err := parseSession(c.cfg.Secret, ck.Value, c.now())
	if err != nil {
		clearSession(w, r)
		return nil, nil
	}
	row, err := c.cfg.Store.SessionByHash(r.Context(), auth.Hash(s.ID))
	if errors.Is(err, auth.ErrSessionNotFound) || (err == nil && !row.Live(c.now())) {
		clearSession(w, r)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look up session: %w", err)
	}
	tok, err := c.lookup(r, row.TokenHash)
	if errors.Is(err, auth.ErrNotFound) || (err == nil && tok.ID != row.TokenID) {
		clearSession(w, r)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &user{token: tok, sess: s}, nil
}

// toLogin sends an anonymous visitor to the login page, back to where
// they were after logging in. htmx requests get HX-Redirect so the whole
// page moves, not a fragment.
func toLogin(w http.ResponseWriter, r *http.Request) {
	target := "/login"
	if r.Method == http.MethodGet && r.Header.Get("HX-Request") == "" {
		target += "?next=" + url.QueryEscape(r.URL.RequestURI())
	}
	redirect(w, r, target)
}

// redirect answers a See Other, or HX-Redirect for htmx.
func redirect(w http.ResponseWriter, r *http.Request, target string) {
	if r.Header.Get("HX-Request") != "" {
		w.Header().Set("HX-Redirect", target)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// handle registers a page of a workspace ({ws} in pattern) that is
// action. It authenticates, checks CSRF on POST, checks the scope the
// action needs (auth.Need, as the API does), and renders errors as pages.
func (c *Console) handle(pattern, nav string, action auth.Action, fn pageFunc) {
	scope := auth.Need(action)
	c.actions[pattern] = action
	c.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		// A form encodes its input at most about three times over
		// (percent-escapes); the input itself is checked after parsing.
		r.Body = http.MaxBytesReader(w, r.Body, 3*c.cfg.MaxInputBytes+64<<10)
		u, err := c.authenticate(w, r)
		if err != nil {
			c.errorPage(w, r, nil, err)
			return
		}
		if u == nil {
			toLogin(w, r)
			return
		}
		q := &req{w: w, r: r, u: u, ws: r.PathValue("ws"), page: nav}
		if r.Method == http.MethodPost {
			if err := r.ParseForm(); err != nil {
				c.errorPage(w, r, q, &pageError{status: http.StatusBadRequest, msg: "The form could not be read.", err: err})
				return
			}
		}
		if r.Method == http.MethodPost && !checkCSRF(r, u.sess) {
			c.errorPage(w, r, q, &pageError{status: http.StatusForbidden,
				msg: "This form has expired or did not come from the console (CSRF check failed). Reload the page and try again."})
			return
		}
		if !q.can(scope) {
			c.errorPage(w, r, q, &pageError{status: http.StatusForbidden,
				msg: fmt.Sprintf("Your token lacks the %s scope in workspace %q.", scope, q.ws)})
			return
		}
		if r.Method == http.MethodGet && u.allWorkspaces() {
			c.remember(q)
		}
		if err := fn(q); err != nil {
			c.errorPage(w, r, q, err)
		}
	})
}

// remember keeps the last workspaces an all-workspace token visited in
// its session, for the workspace switcher.
func (c *Console) remember(q *req) {
	s := q.u.sess
	if len(s.Recent) > 0 && s.Recent[0] == q.ws {
		return
	}
	recent := append([]string{q.ws}, slices.DeleteFunc(slices.Clone(s.Recent), func(w string) bool { return w == q.ws })...)
	s.Recent = recent[:min(len(recent), 8)]
	q.u.sess = s
	if err := c.setSession(q.w, q.r, s); err != nil {
		c.log.Warn("console: remember workspace", "err", err)
	}
}

// validWorkspace keeps workspace names to what URLs and stores accept.
func validWorkspace(ws string) bool {
	if ws == "" || len(ws) > 100 {
		return false
	}
	return !strings.ContainsAny(ws, "/?#%\\ \t\r\n\x00")
}
