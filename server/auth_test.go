package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
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

// TestTokenGrantsOnlyHeldScopes: a token may mint only scopes it holds.
// A workspace admin holds read, run and webhook but not operator, so it
// cannot mint an operator token (reopen is operator-only); an operator
// admin and the bootstrap admin token can.
func TestTokenGrantsOnlyHeldScopes(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		mint := func(by, body string) *resp { return e.call("POST", "/api/tokens", by, body) }
		wsAdmin := mint(adminToken, `{"workspace":"ws","scopes":["admin"]}`).want(201).obj()["token"].(string)
		msg := mint(wsAdmin, `{"workspace":"ws","scopes":["operator"]}`).want(403)
		if !strings.Contains(string(msg.body), "operator") {
			t.Fatalf("403 without the missing scope: %s", msg.body)
		}
		mint(wsAdmin, `{"workspace":"ws","scopes":["read","operator"]}`).wantError(403, "forbidden")
		mint(wsAdmin, `{"workspace":"ws","scopes":["read","run","webhook","admin"]}`).want(201)

		opAdmin := mint(adminToken, `{"workspace":"ws","scopes":["admin","operator"]}`).want(201).obj()["token"].(string)
		op := mint(opAdmin, `{"workspace":"ws","scopes":["operator"]}`).want(201).obj()["token"].(string)
		// The minted operator token works where operator is needed: a
		// reopen of a waiting job is a 409, not a 403.
		id := e.call("POST", "/api/w/ws/jobs/run/hello/greet", adminToken, `{"name":"A"}`).want(201).obj()["id"].(string)
		e.call("POST", "/api/w/ws/jobs/"+id+"/reopen", op, `{}`).wantError(409, "conflict")

		allAdmin := mint(adminToken, `{"workspace":"*","scopes":["admin"]}`).want(201).obj()["token"].(string)
		mint(allAdmin, `{"workspace":"ws","scopes":["operator"]}`).wantError(403, "forbidden")
		mint(adminToken, `{"workspace":"*","scopes":["operator"]}`).want(201)
	})
}

// TestAuditIdentityIsTokenID: created_by, canceled_by and the audit
// actor record "token:<id>", never the free-text label, so a token
// labelled like the scheduler or the admin cannot pass for them; the
// label is shown beside it in the job view, still after revocation.
func TestAuditIdentityIsTokenID(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		for _, label := range []string{"schedule:x", "admin", "token:admin"} {
			body := fmt.Sprintf(`{"workspace":"ws","scopes":["run","read"],"label":%q}`, label)
			minted := e.call("POST", "/api/tokens", adminToken, body).want(201).obj()
			tok, by := minted["token"].(string), "token:"+minted["id"].(string)
			id := e.call("POST", "/api/w/ws/jobs/run/hello/greet", tok, `{"name":"A"}`).want(201).obj()["id"].(string)
			e.call("POST", "/api/w/ws/jobs/"+id+"/cancel", tok, `{"reason":"r"}`).want(200)
			job := e.call("GET", "/api/w/ws/jobs/"+id, tok, "").want(200).obj()
			if job["created_by"] != by || job["canceled_by"] != by ||
				job["created_by_label"] != label || job["canceled_by_label"] != label {
				t.Fatalf("label %q: job by %v (%v), canceled by %v (%v); want %s", label,
					job["created_by"], job["created_by_label"], job["canceled_by"], job["canceled_by_label"], by)
			}
			audit, err := e.db.Audit(t.Context(), uuid.MustParse(id))
			if err != nil || len(audit) != 1 || audit[0].By != by {
				t.Fatalf("label %q: audit %+v %v, want one entry by %s", label, audit, err, by)
			}
			e.call("DELETE", "/api/tokens/"+minted["id"].(string), adminToken, "").want(200)
			if job := e.call("GET", "/api/w/ws/jobs/"+id, adminToken, "").want(200).obj(); job["created_by_label"] != label {
				t.Fatalf("label of a revoked token: %v", job)
			}
		}
		// The bootstrap admin is token:admin, labelled admin.
		id := e.call("POST", "/api/w/ws/jobs/run/hello/greet", adminToken, `{"name":"A"}`).want(201).obj()["id"].(string)
		if job := e.call("GET", "/api/w/ws/jobs/"+id, adminToken, "").want(200).obj(); job["created_by"] != "token:admin" ||
			job["created_by_label"] != "admin" {
			t.Fatalf("bootstrap admin's job %v", job)
		}
	})
}

// TestBearerScheme: the Authorization scheme matches in any case (RFC
// 7235); another scheme is a 401 that names Bearer and never echoes the
// header's value.
func TestBearerScheme(t *testing.T) {
	t.Parallel()
	e := newSQLiteEnv(t)
	for _, h := range []string{"Bearer " + adminToken, "bearer " + adminToken, "BEARER " + adminToken, "bEaReR   " + adminToken + " "} {
		e.send("GET", "/api/w/ws/apps", "", nil, 0, "Authorization", h).want(200)
	}
	for _, h := range []string{"Basic " + adminToken, adminToken, "Token " + adminToken} {
		r := e.send("GET", "/api/w/ws/apps", "", nil, 0, "Authorization", h)
		r.wantError(401, "unauthorized")
		if !strings.Contains(string(r.body), "Bearer") || strings.Contains(string(r.body), adminToken) {
			t.Fatalf("%q answered %s, want a message naming Bearer without the token", h, r.body)
		}
	}
	// The webhook route reads the header the same way.
	e.send("POST", "/api/w/ws/webhooks/hello/greet", "", strings.NewReader(`{"name":"A"}`), 12,
		"Authorization", "bearer "+adminToken, "Content-Type", "application/json").want(201)
}
