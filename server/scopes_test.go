package server_test

import (
	"testing"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/console"
	"github.com/windforce/windforce/server"
)

// TestConsoleAndAPIShareScopes: every console page that acts mirrors an
// API route, and both name the same action, so both need auth.Need of it
// and cannot drift; each route's scope is the one docs/API.md and
// docs/CONSOLE.md give (auth's own test pins the table).
func TestConsoleAndAPIShareScopes(t *testing.T) {
	t.Parallel()
	api, con := server.RouteActions(), console.Actions()
	const w, cw = "POST /api/w/{ws}", "POST /w/{ws}"
	mirrors := map[string]string{
		cw + "/jobs/{id}/cancel":          w + "/jobs/{id}/cancel",
		cw + "/jobs/{id}/reopen":          w + "/jobs/{id}/reopen",
		cw + "/jobs/{id}/rerun":           w + "/jobs/run/{app}/{action}",
		cw + "/apps/{app}/{action}/run":   w + "/jobs/run/{app}/{action}",
		cw + "/sources/{id}/sync":         w + "/sources/{id}/sync",
		cw + "/apps/{app}/deploy":         w + "/apps/{app}/deploy",
		"GET /w/{ws}/apps/{app}":          "GET /api/w/{ws}/apps/{app}",
		cw + "/runs/requeue":              w + "/jobs/requeue",
		"GET /w/{ws}/runs/requeue":        w + "/jobs/requeue",
		cw + "/schedules":                 w + "/schedules",
		cw + "/schedules/{id}/enable":     "PATCH /api/w/{ws}/schedules/{id}",
		cw + "/schedules/{id}/disable":    "PATCH /api/w/{ws}/schedules/{id}",
		cw + "/schedules/{id}/delete":     "DELETE /api/w/{ws}/schedules/{id}",
		"GET /w/{ws}/runs":                "GET /api/w/{ws}/jobs",
		"GET /w/{ws}/jobs/{id}":           "GET /api/w/{ws}/jobs/{id}",
		"GET /w/{ws}/jobs/{id}/logs":      "GET /api/w/{ws}/jobs/{id}/logs",
		"GET /w/{ws}/jobs/{id}/outcome":   "GET /api/w/{ws}/jobs/{id}/result",
		"GET /w/{ws}/apps":                "GET /api/w/{ws}/apps",
		"GET /w/{ws}/apps/{app}/{action}": "GET /api/w/{ws}/apps/{app}",
		"GET /w/{ws}/sources":             "GET /api/w/{ws}/sources",
		"GET /w/{ws}/schedules":           "GET /api/w/{ws}/schedules",
		"GET /w/{ws}/schedules/preview":   "GET /api/w/{ws}/schedules/preview",
		"GET /w/{ws}/health":              "GET /api/w/{ws}/queue/health",
		"GET /w/{ws}/{$}":                 "GET /api/w/{ws}/jobs",
		"GET /w/{ws}/events":              "GET /api/w/{ws}/events",
		"GET /w/{ws}/events/sinks/{id}":   "GET /api/w/{ws}/event-sinks/{id}/deliveries",
		cw + "/events/sinks":              w + "/event-sinks",
		cw + "/events/sinks/{id}/delete":  "DELETE /api/w/{ws}/event-sinks/{id}",

		// Secrets (DESIGN §8).
		"GET /w/{ws}/secrets":               "GET /api/w/{ws}/secrets",
		cw + "/secrets":                     "PUT /api/w/{ws}/secrets/{name}",
		"GET /w/{ws}/secrets/audit":         "GET /api/w/{ws}/secrets/audit",
		"GET /w/{ws}/secrets/{name}/delete": "DELETE /api/w/{ws}/secrets/{name}",
		cw + "/secrets/{name}/delete":       "DELETE /api/w/{ws}/secrets/{name}",
	}
	for page, action := range con {
		route, ok := mirrors[page]
		if !ok {
			t.Errorf("console page %s (%s) mirrors no API route in this test; add it", page, action)
			continue
		}
		apiAction, ok := api[route]
		if !ok {
			t.Errorf("console page %s mirrors %s, which the API does not register", page, route)
			continue
		}
		if action != apiAction || auth.Need(action) != auth.Need(apiAction) {
			t.Errorf("console page %s is %s (scope %s), API route %s is %s (scope %s)",
				page, action, auth.Need(action), route, apiAction, auth.Need(apiAction))
		}
	}
	if len(con) != len(mirrors) {
		t.Errorf("console registers %d pages, the test knows %d", len(con), len(mirrors))
	}
}

// TestAPIRouteScopes pins each API route's scope to docs/API.md "Scopes".
func TestAPIRouteScopes(t *testing.T) {
	t.Parallel()
	const w = "/api/w/{ws}"
	want := map[string]auth.Scope{
		"POST " + w + "/jobs/run/{app}/{action}": auth.ScopeRun, "GET " + w + "/jobs/{id}": auth.ScopeRead,
		"GET " + w + "/jobs/{id}/result": auth.ScopeRead, "GET " + w + "/jobs/{id}/logs": auth.ScopeRead,
		"GET " + w + "/jobs/{id}/superseded": auth.ScopeRead, "GET " + w + "/jobs": auth.ScopeRead,
		"POST " + w + "/jobs/{id}/cancel": auth.ScopeRun, "POST " + w + "/jobs/{id}/reopen": auth.ScopeOperator,
		"POST " + w + "/jobs/{id}/requeue": auth.ScopeRun,
		"POST " + w + "/jobs/requeue":      auth.ScopeRun,
		"POST " + w + "/apps/{app}/deploy": auth.ScopeAdmin, "GET " + w + "/sources": auth.ScopeRead,
		"POST " + w + "/sources": auth.ScopeAdmin, "POST " + w + "/sources/{id}/sync": auth.ScopeAdmin,
		"POST " + w + "/sources/{id}/hook": auth.ScopeRun, "GET " + w + "/apps": auth.ScopeRead,
		"PUT " + w + "/sources/{id}/hook-secret": auth.ScopeAdmin,
		"GET " + w + "/apps/{app}":               auth.ScopeRead, "GET " + w + "/queue/health": auth.ScopeRead,
		"GET " + w + "/schedules": auth.ScopeRead, "GET " + w + "/schedules/preview": auth.ScopeRead,
		"GET " + w + "/schedules/{id}": auth.ScopeRead, "POST " + w + "/schedules": auth.ScopeAdmin,
		"PATCH " + w + "/schedules/{id}": auth.ScopeAdmin, "DELETE " + w + "/schedules/{id}": auth.ScopeAdmin,
		"POST " + w + "/webhooks/{app}/{action}":        auth.ScopeWebhook,
		"POST " + w + "/webhooks/{app}/{action}/secret": auth.ScopeAdmin,
		"DELETE /api/tokens/{id}":                       auth.ScopeAdmin,
		"GET " + w + "/event-sinks":                     auth.ScopeRead, "GET " + w + "/event-sinks/{id}": auth.ScopeRead,
		"POST " + w + "/event-sinks": auth.ScopeAdmin, "PATCH " + w + "/event-sinks/{id}": auth.ScopeAdmin,
		"DELETE " + w + "/event-sinks/{id}":         auth.ScopeAdmin,
		"GET " + w + "/event-sinks/{id}/deliveries": auth.ScopeRead,
		"GET " + w + "/events":                      auth.ScopeRead,

		"GET " + w + "/secrets": auth.ScopeRead, "GET " + w + "/secrets/audit": auth.ScopeAdmin,
		"PUT " + w + "/secrets/{name}": auth.ScopeAdmin, "DELETE " + w + "/secrets/{name}": auth.ScopeAdmin,
	}
	got := server.RouteActions()
	for route, action := range got {
		if s := auth.Need(action); s != want[route] {
			t.Errorf("%s needs %q, want %q", route, s, want[route])
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d routes with a scope, want %d: %v", len(got), len(want), got)
	}
}
