package console

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/spine"
)

//go:embed templates/*.html
var templateFS embed.FS

// shared are the templates every page is parsed with.
var shared = []string{"templates/layout.html", "templates/parts.html"}

// parsePages parses each page template with the layout and shared parts,
// so each page defines its own "title" and "content".
func parsePages() (map[string]*template.Template, error) {
	files, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("console templates: %w", err)
	}
	pages := map[string]*template.Template{}
	for _, f := range files {
		if f == shared[0] || f == shared[1] {
			continue
		}
		name := strings.TrimSuffix(path.Base(f), ".html")
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, append(shared[:2:2], f)...)
		if err != nil {
			return nil, fmt.Errorf("console template %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// view is what every page template gets: the layout's fields and the
// page's data D.
type view struct {
	Title      string
	WS         string
	Nav        string
	CSRF       string
	User       string
	AllWS      bool
	Workspaces []string
	token      *auth.Token
	D          any
}

// Can reports whether the logged-in token may do action (an auth.Action:
// "cancel", "reopen", "sync-source", …) here, by the scope auth.Need
// gives it; templates hide buttons the user could not use (the handlers
// check again). An unknown action panics, which fails the render.
func (v view) Can(action string) bool {
	return v.token != nil && v.token.Allows(v.WS, auth.Need(auth.Action(action)))
}

// view builds the layout fields of q's page.
func (c *Console) view(q *req, title string, d any) view {
	v := view{Title: title, D: d}
	if q == nil {
		return v
	}
	v.WS, v.Nav, v.CSRF, v.User = q.ws, q.page, q.u.sess.CSRF, q.u.display()
	v.AllWS, v.token = q.u.allWorkspaces(), &q.u.token
	v.Workspaces = c.workspaces(q)
	return v
}

// render executes page (its "layout", or block when not "") with status.
// A template error is a bug; it is logged and answered 500 before anything
// is written.
func (c *Console) render(w http.ResponseWriter, status int, page, block string, v any) {
	t, ok := c.pages[page]
	if !ok {
		http.Error(w, "console: no page "+page, http.StatusInternalServerError)
		return
	}
	if block == "" {
		block = "layout"
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, block, v); err != nil {
		c.log.Error("console: render", "page", page, "block", block, "err", err)
		http.Error(w, "console: render failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// page renders a full page with status 200. htmx refreshes pick their
// part out of it with hx-select, so every page has one template.
func (c *Console) page(q *req, name, title string, d any) error {
	c.render(q.w, http.StatusOK, name, "", c.view(q, title, d))
	return nil
}

// pageError is an error with the status and message a page shows.
type pageError struct {
	status int
	msg    string
	err    error
}

func (e *pageError) Error() string { return e.msg }
func (e *pageError) Unwrap() error { return e.err }

// classify maps an error to the status and message shown, like the API's
// toAPIError: typed errors of the layers below; anything else is 500
// whose cause is logged, not shown.
func classify(err error) (int, string) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("The form is over the limit of %d bytes.", mbe.Limit)
	}
	var pe *pageError
	if errors.As(err, &pe) {
		return pe.status, pe.msg
	}
	var se *source.SyncError
	if errors.As(err, &se) {
		return http.StatusUnprocessableEntity, se.Message()
	}
	switch {
	case errors.Is(err, spine.ErrNotFound): // every kind's not-found matches it
		return http.StatusNotFound, err.Error()
	case errors.Is(err, spine.ErrConflict), errors.Is(err, catalog.ErrConflict):
		return http.StatusConflict, err.Error()
	case errors.Is(err, spine.ErrInvalid), errors.Is(err, catalog.ErrInvalidInput):
		return http.StatusBadRequest, err.Error()
	}
	return http.StatusInternalServerError, "Something went wrong on the server; the error is in its log."
}

// errorPage renders err as a page with its status.
func (c *Console) errorPage(w http.ResponseWriter, r *http.Request, q *req, err error) {
	status, msg := classify(err)
	if status >= 500 {
		c.log.Error("console: request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	title := http.StatusText(status)
	if r.Header.Get("HX-Request") != "" {
		// htmx swaps only 2xx by default; show the message where the
		// request's target is, with the status kept for scripts and tests.
		w.Header().Set("HX-Reswap", "innerHTML")
		w.Header().Set("HX-Retarget", "#flash")
		c.render(w, http.StatusOK, "error", "message", c.view(q, title, map[string]any{"Status": status, "Message": msg}))
		return
	}
	c.render(w, status, "error", "", c.view(q, title, map[string]any{"Status": status, "Message": msg}))
}
