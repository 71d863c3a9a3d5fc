package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/windforce/windforce/secrets"
	"github.com/windforce/windforce/server"
)

// secretValue is the value the secret tests set; no answer may carry it.
const secretValue = "xoxb-0123456789-the-value"

// noValue fails when r's body carries the value v.
func (r *resp) noValue(v string) *resp {
	r.t.Helper()
	if bytes.Contains(r.body, []byte(v)) {
		r.t.Fatalf("answer carries the secret value: %s", r.body)
	}
	return r
}

// secretsStored is what the workspace holds: its secrets and audit entries.
func (e *env) secretsStored() (list []secrets.Secret, audit []secrets.AuditEntry) {
	e.t.Helper()
	list, err := e.db.ListSecrets(e.t.Context(), ws)
	if err != nil {
		e.t.Fatal(err)
	}
	audit, _, err = e.db.SecretAudit(e.t.Context(), ws, 0, 500)
	if err != nil {
		e.t.Fatal(err)
	}
	return list, audit
}

// TestSecretsAPI: admin creates (201) and replaces (200) a secret, a read
// token lists it (names, description, version, who and when, never the
// value) but may not set, delete or read the audit; delete is 204 then
// 404; the audit says who did what; no answer carries the value; on both
// databases.
func TestSecretsAPI(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		const path = "/api/w/ws/secrets/SLACK_TOKEN"
		reader := e.newToken(`"read","run"`)
		created := e.call("PUT", path, adminToken, `{"value":"`+secretValue+`","description":"the bot"}`).want(201).noValue(secretValue).obj()
		if created["name"] != "SLACK_TOKEN" || created["description"] != "the bot" || created["version"] != json.Number("1") ||
			created["updated_by"] != "token:admin" || created["updated_at"] == "" || len(created) != 5 {
			t.Fatalf("created %v", created)
		}
		replaced := e.call("PUT", path, adminToken, `{"value":"`+secretValue+`2"}`).want(200).noValue(secretValue).obj()
		if replaced["version"] != json.Number("2") || replaced["description"] != "" {
			t.Fatalf("replaced %v", replaced)
		}
		for _, tok := range []string{adminToken, reader} {
			r := e.call("GET", "/api/w/ws/secrets", tok, "").want(200).noValue(secretValue)
			var list []map[string]any
			if err := json.Unmarshal(r.body, &list); err != nil || len(list) != 1 || list[0]["version"] != float64(2) ||
				list[0]["name"] != "SLACK_TOKEN" || len(list[0]) != 5 {
				t.Fatalf("list %s: %v", r.body, err)
			}
		}
		e.call("GET", "/api/w/other/secrets", adminToken, "").want(200)
		e.call("PUT", path, reader, `{"value":"x"}`).wantError(403, "forbidden")
		e.call("DELETE", path, reader, "").wantError(403, "forbidden")
		e.call("GET", "/api/w/ws/secrets/audit", reader, "").wantError(403, "forbidden")

		e.call("DELETE", path, adminToken, "").want(204)
		e.call("DELETE", path, adminToken, "").wantError(404, "not_found")
		if r := e.call("GET", "/api/w/ws/secrets", reader, ""); strings.TrimSpace(string(r.want(200).body)) != "[]" {
			t.Fatalf("list after delete: %s", r.body)
		}
		if v := e.call("PUT", path, adminToken, `{"value":"again"}`).want(201).obj()["version"]; v != json.Number("3") {
			t.Fatalf("re-created version %v, want 3", v)
		}
		audit := e.call("GET", "/api/w/ws/secrets/audit?limit=3", adminToken, "").want(200).noValue(secretValue).obj()
		entries := audit["entries"].([]any)
		var got []string
		for _, x := range entries {
			m := x.(map[string]any)
			got = append(got, m["action"].(string)+"@"+string(m["version"].(json.Number))+" "+m["actor"].(string))
		}
		if strings.Join(got, ",") != "create@3 token:admin,delete@2 token:admin,replace@2 token:admin" || audit["next_cursor"] == nil {
			t.Fatalf("audit page %v, next %v", got, audit["next_cursor"])
		}
		rest := e.call("GET", "/api/w/ws/secrets/audit?cursor="+audit["next_cursor"].(string), adminToken, "").want(200).obj()
		if n := len(rest["entries"].([]any)); n != 1 || rest["next_cursor"] != nil {
			t.Fatalf("second audit page: %v", rest)
		}
		e.call("GET", "/api/w/ws/secrets/audit?cursor=x", adminToken, "").wantError(400, "bad_request")
		e.call("GET", "/api/w/ws/secrets/audit?limit=0", adminToken, "").wantError(400, "bad_request")
	})
}

// TestSecretsAPIRefusals: each bad request answers its status and stores
// no row and no audit entry; on both databases.
func TestSecretsAPIRefusals(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		big := strings.Repeat("x", secrets.MaxValueBytes+1)
		for _, c := range []struct {
			what, name, body string
			status           int
			code             string
		}{
			{"bad name", "1BAD", `{"value":"v"}`, 422, "invalid_input"},
			{"long name", strings.Repeat("a", 65), `{"value":"v"}`, 422, "invalid_input"},
			{"empty value", "A", `{"value":""}`, 422, "invalid_input"},
			{"no value", "A", `{"description":"d"}`, 422, "invalid_input"},
			{"empty body", "A", ``, 422, "invalid_input"},
			{"bad description", "A", `{"value":"v","description":"a\u0007b"}`, 422, "invalid_input"},
			{"oversized value", "A", `{"value":"` + big + `"}`, 413, "payload_too_large"},
			{"NUL", "A", `{"value":"a\u0000b"}`, 400, "bad_request"},
			{"lone surrogate", "A", `{"value":"a\ud800b"}`, 400, "bad_request"},
			{"invalid UTF-8", "A", "{\"value\":\"a\xffb\"}", 400, "bad_request"},
			{"bad JSON", "A", `{"value":`, 400, "bad_request"},
			{"unknown field", "A", `{"value":"v","valu":"w"}`, 400, "bad_request"},
			{"value not a string", "A", `{"value":42}`, 400, "bad_request"},
		} {
			t.Run(c.what, func(t *testing.T) {
				e.call("PUT", "/api/w/ws/secrets/"+c.name, adminToken, c.body).wantError(c.status, c.code)
			})
		}
		// A body over the limit is refused from its Content-Length, and a
		// chunked one at the limit, before either is read whole.
		huge := strings.Repeat("y", 8<<20)
		e.call("PUT", "/api/w/ws/secrets/A", adminToken, `{"value":"`+huge+`"}`).wantError(413, "payload_too_large")
		r := io.MultiReader(strings.NewReader(`{"value":"`), strings.NewReader(huge), strings.NewReader(`"}`))
		e.send("PUT", "/api/w/ws/secrets/A", adminToken, r, -1).wantError(413, "payload_too_large")
		if list, audit := e.secretsStored(); len(list) != 0 || len(audit) != 0 {
			t.Fatalf("refused requests stored %+v and audited %+v", list, audit)
		}
		e.call("PUT", "/api/w/ws/secrets/A", adminToken, `{"value":"`+big[1:]+`"}`).want(201)
		if list, audit := e.secretsStored(); len(list) != 1 || list[0].Version != 1 || len(audit) != 1 {
			t.Fatalf("a value of exactly the limit: %+v, %+v", list, audit)
		}
	})
}

// TestSecretsAPINoKey: a server without a secrets key refuses to set one
// (503) and stores nothing.
func TestSecretsAPINoKey(t *testing.T) {
	t.Parallel()
	e := newSQLiteEnv(t)
	e.second(t, func(c *server.Config) { c.SecretsKey = secrets.Key{} }).
		call("PUT", "/api/w/ws/secrets/A", adminToken, `{"value":"v"}`).wantError(http.StatusServiceUnavailable, "unavailable")
	if list, audit := e.secretsStored(); len(list) != 0 || len(audit) != 0 {
		t.Fatalf("stored %+v, %+v", list, audit)
	}
}
