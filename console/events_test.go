package console_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/windforce/windforce/auth"
)

var secretRE = regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`)

// TestEventsPageSinks: an admin adds a webhook sink with the form and
// sees its secret once (the next load of the page does not show it);
// a refused form is 422 with the reason and stores nothing; a form
// without its CSRF token is 403; a read token sees the page without the
// forms and cannot post them; remove deletes the sink.
func TestEventsPageSinks(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		br := e.browser()
		br.login(adminToken)
		br.get("/w/ws/events").want(http.StatusOK).contains("No event sinks in ws.", `id="sink-form"`, "Recent events")

		bad := br.post("/w/ws/events/sinks", url.Values{"kind": {"webhook"}, "url": {"ftp://example.com"}, "id": {"bad"}})
		bad.want(http.StatusUnprocessableEntity).contains("url", "ftp://example.com")
		if sinks, _ := e.db.ListSinks(t.Context(), ws); len(sinks) != 0 {
			t.Fatalf("a refused form stored %+v", sinks)
		}
		noCSRF := br.do("POST", "/w/ws/events/sinks", url.Values{"kind": {"webhook"}, "url": {"https://example.com/h"}})
		noCSRF.want(http.StatusForbidden)

		made := br.post("/w/ws/events/sinks", url.Values{"kind": {"webhook"}, "url": {"https://example.com/h"}, "id": {"hook"},
			"types": {"job.succeeded", "job.failed"}}).want(http.StatusOK)
		shown := secretRE.FindString(html.UnescapeString(made.body))
		if shown == "" || !strings.Contains(made.body, `id="sink-secret"`) {
			t.Fatalf("the create did not show the secret:\n%s", made.body)
		}
		s, err := e.db.GetSink(t.Context(), ws, "hook")
		if err != nil || s.Secret != shown || strings.Join(s.Types, ",") != "job.succeeded,job.failed" || s.CreatedBy == "" {
			t.Fatalf("stored sink %+v (%v), shown secret %q", s, err, shown)
		}
		again := br.get("/w/ws/events").want(http.StatusOK).contains(`id="sink-hook"`, "job.succeeded, job.failed")
		if strings.Contains(again.body, "whsec_") {
			t.Fatal("the events page shows the secret again")
		}
		br.get("/w/ws/events/sinks/hook").want(http.StatusOK).contains("Sink hook", "No deliveries to hook yet")
		br.get("/w/ws/events/sinks/nope").want(http.StatusNotFound)

		text, _ := e.newToken(ws, auth.ScopeRead)
		reader := e.browser()
		reader.login(text)
		view := reader.get("/w/ws/events").want(http.StatusOK).contains(`id="sink-hook"`)
		if strings.Contains(view.body, `id="sink-form"`) || strings.Contains(view.body, "/delete") {
			t.Fatal("a read token sees the sink forms")
		}
		reader.post("/w/ws/events/sinks", url.Values{"kind": {"webhook"}, "url": {"https://example.com/x"}}).want(http.StatusForbidden)
		reader.post("/w/ws/events/sinks/hook/delete", nil).want(http.StatusForbidden)

		if p := br.post("/w/ws/events/sinks/hook/delete", nil); p.status != http.StatusSeeOther {
			t.Fatalf("delete answered %d", p.status)
		}
		if sinks, _ := e.db.ListSinks(t.Context(), ws); len(sinks) != 0 {
			t.Fatalf("after delete: %+v", sinks)
		}
	})
}
