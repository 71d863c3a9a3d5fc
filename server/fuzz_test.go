package server_test

import (
	"net/url"
	"testing"
)

// FuzzRun sends arbitrary bodies and queries to POST run: the answer is
// never a 5xx, and a refused request creates no job.
func FuzzRun(f *testing.F) {
	e := newSQLiteEnv(f)
	for _, seed := range []struct{ body, query string }{
		{`{"name":"Ada"}`, ""},
		{`{"name":"Ada"}`, "priority=3&coalesce_key=k"},
		{`{"name":1}`, ""},
		{`{}`, "scheduled_for=2030-01-01T00:00:00Z"},
		{`{"name":"a\u0000"}`, ""},
		{"{\"name\":\"\xff\"}", ""},
		{`[1,2`, "priority=x"},
		{``, "scheduled_for=nope"},
		{`null`, "coalesce_key=%00"},
		{`{"name":"Ada","extra":true}`, "priority=99999999999"},
	} {
		f.Add([]byte(seed.body), seed.query)
	}
	f.Fuzz(func(t *testing.T, body []byte, query string) {
		fe := *e
		fe.t = t
		q, err := url.ParseQuery(query)
		if err != nil {
			q = url.Values{}
		}
		q.Del("wait") // a long-poll only slows the fuzzer down
		before := fe.jobCount()
		r := fe.call("POST", "/api/w/ws/jobs/run/hello/greet?"+q.Encode(), adminToken, string(body))
		if r.status >= 500 {
			t.Fatalf("status %d for body %q query %q: %s", r.status, body, query, r.body)
		}
		if r.status != 201 {
			r.wantError(r.status, map[int]string{400: "bad_request", 404: "not_found", 413: "payload_too_large", 422: "invalid_input"}[r.status])
			if n := fe.jobCount(); n != before {
				t.Fatalf("refused request (%d) created a job: %d jobs, want %d", r.status, n, before)
			}
		}
	})
}
