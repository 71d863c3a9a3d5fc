package server_test

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestEventSinks: create (a generated id and webhook secret answered once,
// defaults), list, get, patch and delete sinks; the secret is never read
// back; only admin writes; bad input is 400/422 and stores nothing; on
// both databases.
func TestEventSinks(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		const base = "/api/w/ws/event-sinks"
		created := e.call("POST", base, adminToken, `{"kind":"webhook","url":"https://hooks.example.com/in?token=abc"}`).want(201).obj()
		id, _ := created["id"].(string)
		secret, _ := created["secret"].(string)
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
		if !strings.HasPrefix(id, "webhook-") || !strings.HasPrefix(secret, "whsec_") || err != nil || len(key) != 32 ||
			created["subject"] != "windforce" || created["enabled"] != true || created["secret_set"] != true ||
			created["created_by"] != "token:admin" || len(created["types"].([]any)) != 0 {
			t.Fatalf("created %v", created)
		}
		if u := created["url"].(string); strings.Contains(u, "abc") {
			t.Fatalf("url %q shows its query", u)
		}
		got := e.call("GET", base+"/"+id, adminToken, "").want(200)
		if strings.Contains(string(got.body), secret[6:]) || got.obj()["secret"] != nil {
			t.Fatalf("GET shows the secret: %s", got.body)
		}

		// A nats sink with its own id, subject and types; a webhook with
		// its own secret does not get it back.
		nats := e.call("POST", base, adminToken, `{"id":"bus","kind":"nats","url":"nats://user:pw@127.0.0.1:4222","subject":"acme.jobs","types":["job.succeeded","job.failed"]}`).want(201).obj()
		if nats["id"] != "bus" || nats["subject"] != "acme.jobs" || nats["secret_set"] != false || nats["secret"] != nil ||
			strings.Contains(nats["url"].(string), "pw") {
			t.Fatalf("nats sink %v", nats)
		}
		own := "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef01234567"))
		mine := e.call("POST", base, adminToken, `{"id":"mine","kind":"webhook","url":"http://127.0.0.1:9/x","secret":"`+own+`"}`).want(201)
		if strings.Contains(string(mine.body), own[6:]) {
			t.Fatalf("create with a given secret echoes it: %s", mine.body)
		}
		list := e.call("GET", base, adminToken, "").want(200).obj()["sinks"].([]any)
		if len(list) != 3 || list[1].(map[string]any)["id"] != "bus" || strings.Contains(e.call("GET", base, adminToken, "").body2(), "whsec_") {
			t.Fatalf("list %v", list)
		}

		// Refusals: 400 for a body that is not the shape, 422 for values;
		// none stores a sink.
		for _, bad := range []struct {
			body   string
			status int
		}{
			{`{"kind":`, 400},
			{`{"kind":"nats","url":"nats://h:4222","extra":1}`, 400},
			{`{"kind":"kafka","url":"nats://h:4222"}`, 422},
			{`{"kind":"nats","url":"http://h:4222"}`, 422},
			{`{"kind":"webhook","url":"nats://h:4222"}`, 422},
			{`{"kind":"webhook","url":"ftp://h/x"}`, 422},
			{`{"kind":"webhook","url":"https:///nohost"}`, 422},
			{`{"kind":"nats","url":"nats://h:4222","types":["job.exploded"]}`, 422},
			{`{"kind":"nats","url":"nats://h:4222","types":["job.failed","job.failed"]}`, 422},
			{`{"kind":"nats","url":"nats://h:4222","subject":"a.*"}`, 422},
			{`{"kind":"nats","url":"nats://h:4222","subject":"a..b"}`, 422},
			{`{"kind":"nats","url":"nats://h:4222","secret":"` + own + `"}`, 422},
			{`{"kind":"webhook","url":"https://h/x","secret":"hunter2"}`, 422},
			{`{"kind":"webhook","url":"https://h/x","secret":"whsec_c2hvcnQ="}`, 422},
			{`{"kind":"webhook","url":"https://h/x","secret":"whsec_!!!"}`, 422},
			{`{"id":"../x","kind":"nats","url":"nats://h:4222"}`, 422},
			{`{"id":"bus","kind":"nats","url":"nats://h:4222"}`, 409},
		} {
			r := e.call("POST", base, adminToken, bad.body)
			if r.status != bad.status {
				t.Errorf("POST %s: %d %s, want %d", bad.body, r.status, r.body, bad.status)
			}
		}
		if n := len(e.call("GET", base, adminToken, "").want(200).obj()["sinks"].([]any)); n != 3 {
			t.Fatalf("%d sinks after refused creates, want 3", n)
		}

		// Scopes: read lists, only admin writes.
		reader := e.newToken(`"read"`)
		e.call("GET", base, reader, "").want(200)
		e.call("POST", base, reader, `{"kind":"nats","url":"nats://h:4222"}`).wantError(403, "forbidden")
		e.call("PATCH", base+"/bus", reader, `{"enabled":false}`).wantError(403, "forbidden")
		e.call("DELETE", base+"/bus", reader, "").wantError(403, "forbidden")

		// Patch: each field, a bad value changes nothing.
		p := e.call("PATCH", base+"/bus", adminToken, `{"enabled":false,"types":[],"subject":"other","url":"nats://127.0.0.1:4333"}`).want(200).obj()
		if p["enabled"] != false || len(p["types"].([]any)) != 0 || p["subject"] != "other" || p["url"] != "nats://127.0.0.1:4333" {
			t.Fatalf("patched %v", p)
		}
		e.call("PATCH", base+"/bus", adminToken, `{"enabled":true,"url":"https://x/y"}`).wantError(422, "invalid_input")
		e.call("PATCH", base+"/"+id, adminToken, `{"secret":""}`).wantError(422, "invalid_input")
		e.call("PATCH", base+"/"+id, adminToken, `{}`).wantError(400, "bad_request")
		e.call("PATCH", base+"/nope", adminToken, `{"enabled":true}`).wantError(404, "not_found")
		if g := e.call("GET", base+"/bus", adminToken, "").want(200).obj(); g["enabled"] != false || g["url"] != "nats://127.0.0.1:4333" {
			t.Fatalf("a refused patch changed the sink: %v", g)
		}
		e.call("PATCH", base+"/"+id, adminToken, `{"secret":"`+own+`"}`).want(200)

		// Delete.
		e.call("DELETE", base+"/bus", adminToken, "").want(204)
		e.call("GET", base+"/bus", adminToken, "").wantError(404, "not_found")
		e.call("DELETE", base+"/bus", adminToken, "").wantError(404, "not_found")
	})
}

// body2 is the body as text.
func (r *resp) body2() string { return string(r.body) }
