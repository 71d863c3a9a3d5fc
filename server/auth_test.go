package server_test

import (
	"net/http"
	"testing"
)

// TestAuth: deny by default, scopes per workspace, token creation rules
// and revocation that takes effect on the next request.
func TestAuth(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		// Deny by default on every API route.
		for _, h := range []string{"", "Bearer ", "Basic " + adminToken, "Bearer wrong"} {
			req := e.send("GET", "/api/w/ws/apps", "", nil, 0, "Authorization", h)
			req.wantError(401, "unauthorized")
			if req.header.Get("WWW-Authenticate") == "" {
				t.Fatal("401 without WWW-Authenticate")
			}
		}
		tok := e.call("POST", "/api/tokens", adminToken, `{"workspace":"ws","scopes":["read"],"label":"reader"}`).want(201).obj()
		if tok["id"] == "" || tok["token"] == "" || tok["workspace"] != "ws" {
			t.Fatalf("token answer %v", tok)
		}
		read := tok["token"].(string)
		e.call("GET", "/api/w/ws/apps", read, "").want(200)
		e.call("GET", "/api/w/ws/queue/health", read, "").want(200)
		e.call("GET", "/api/w/other/apps", read, "").wantError(403, "forbidden")
		e.call("POST", "/api/w/ws/sources/main/sync", read, "").wantError(403, "forbidden")
		e.call("POST", "/api/w/ws/jobs/run/hello/greet", read, `{"name":"A"}`).wantError(403, "forbidden")
		e.call("POST", "/api/tokens", read, `{"workspace":"ws","scopes":["read"]}`).wantError(403, "forbidden")

		// A workspace admin creates tokens in its workspace only.
		wsAdmin := e.call("POST", "/api/tokens", adminToken, `{"workspace":"ws","scopes":["admin"]}`).want(201).obj()["token"].(string)
		e.call("POST", "/api/tokens", wsAdmin, `{"workspace":"ws","scopes":["run"]}`).want(201)
		e.call("POST", "/api/tokens", wsAdmin, `{"workspace":"other","scopes":["run"]}`).wantError(403, "forbidden")
		e.call("POST", "/api/tokens", wsAdmin, `{"workspace":"*","scopes":["run"]}`).wantError(403, "forbidden")
		e.call("POST", "/api/w/ws/jobs/run/hello/greet", wsAdmin, `{"name":"A"}`).want(201)
		e.call("DELETE", "/api/tokens/"+tok["id"].(string), wsAdmin, "").wantError(403, "forbidden")
		e.call("POST", "/api/tokens", adminToken, `{"workspace":"ws","scopes":["root"]}`).wantError(422, "invalid_input")
		e.call("POST", "/api/tokens", adminToken, `{"workspace":"ws","scopes":[]}`).wantError(422, "invalid_input")
		e.call("POST", "/api/tokens", adminToken, `{"workspace":"ws","scopes":["read"],"extra":1}`).wantError(400, "bad_request")

		// Revocation: the next request with the token is refused.
		e.call("DELETE", "/api/tokens/"+tok["id"].(string), adminToken, "").want(http.StatusOK)
		e.call("GET", "/api/w/ws/apps", read, "").wantError(401, "unauthorized")
		e.call("DELETE", "/api/tokens/"+tok["id"].(string), adminToken, "").wantError(404, "not_found")
	})
}

// TestHealth: liveness, readiness and queue health.
func TestHealth(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		if v := e.call("GET", "/healthz", "", "").want(200).obj(); v["status"] != "ok" {
			t.Fatalf("healthz %v", v)
		}
		if v := e.call("GET", "/readyz", "", "").want(200).obj(); v["status"] != "ready" {
			t.Fatalf("readyz %v", v)
		}
		e.call("POST", "/api/w/ws/jobs/run/hello/greet", adminToken, `{"name":"A"}`).want(201)
		h := e.call("GET", "/api/w/ws/queue/health", adminToken, "").want(200).obj()
		tags := h["tags"].([]any)
		if len(tags) != 1 || tags[0].(map[string]any)["tag"] != "default" || tags[0].(map[string]any)["waiting"].(interface{ String() string }).String() != "1" {
			t.Fatalf("queue health %v", h)
		}
		if h := e.call("GET", "/api/w/other/queue/health", adminToken, "").want(200).obj(); len(h["tags"].([]any)) != 0 {
			t.Fatalf("other workspace's health %v", h)
		}
	})
}
