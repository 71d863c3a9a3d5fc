package server_test

import (
	"strings"
	"testing"
)

// TestSources: the source shape, sync answers and 422s that leave the
// catalog as it was, push hooks, and the apps catalog.
func TestSources(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		first := e.sync1["commit"].(string)
		if apps := e.sync1["apps"].([]any); len(first) != 40 || len(apps) != 1 || apps[0].(map[string]any)["app"] != "hello" {
			t.Fatalf("sync answered %v", e.sync1)
		}
		srcs := e.call("GET", "/api/w/ws/sources", adminToken, "").want(200).obj()["sources"].([]any)
		src := srcs[0].(map[string]any)
		if len(srcs) != 1 || src["id"] != "main" || src["url"] != e.repo.URL || src["branch"] != "main" ||
			src["commit"] != first || src["synced_at"] == nil || src["error"] != "" {
			t.Fatalf("sources %v", srcs)
		}
		// Bad sources are refused.
		e.call("POST", "/api/w/ws/sources", adminToken, `{"id":"x","url":"ftp://nope"}`).wantError(422, "invalid_input")
		e.call("POST", "/api/w/ws/sources", adminToken, `{"id":"../x","url":"`+e.repo.URL+`"}`).wantError(422, "invalid_input")
		e.call("POST", "/api/w/ws/sources", adminToken, `{"url":`).wantError(400, "bad_request")
		e.call("POST", "/api/w/ws/sources/nope/sync", adminToken, "").wantError(404, "not_found")

		// A bad manifest: 422 with the step; catalog and source commit stay.
		e.repo.Write(t, map[string]string{"windforce.yaml": "apps:\n  hello:\n    runtime: cobol\n"})
		bad := e.repo.CommitPush(t, "break")
		d := e.call("POST", "/api/w/ws/sources/main/sync", adminToken, "").wantError(422, "sync_failed")
		if d["step"] != "validate" || d["source"] != "main" || !strings.HasPrefix(bad, d["commit"].(string)) {
			t.Fatalf("sync details %v", d)
		}
		srcs = e.call("GET", "/api/w/ws/sources", adminToken, "").want(200).obj()["sources"].([]any)
		if s := srcs[0].(map[string]any); s["commit"] != first || s["error"] == "" {
			t.Fatalf("source after a failed sync %v", s)
		}
		app := e.call("GET", "/api/w/ws/apps/hello", adminToken, "").want(200).obj()
		if app["commit_sha"] != first {
			t.Fatalf("app at %v after a failed sync, want %s", app["commit_sha"], first)
		}
		// A hook for another branch is ignored; for main it syncs (and
		// fails the same way here).
		if h := e.call("POST", "/api/w/ws/sources/main/hook", adminToken, `{"ref":"refs/heads/dev"}`).want(200).obj(); h["ignored"] != true {
			t.Fatalf("hook answered %v", h)
		}
		e.call("POST", "/api/w/ws/sources/main/hook", adminToken, `{"ref":"refs/heads/main"}`).wantError(422, "sync_failed")
		e.call("POST", "/api/w/ws/sources/main/hook", adminToken, `{"ref":`).wantError(400, "bad_request")

		// Apps: actions with schemas and the pinned values.
		actions := app["actions"].([]any)
		if len(actions) != 3 || app["runtime"] != "bun" || app["git_source_id"] != "main" {
			t.Fatalf("app %v", app)
		}
		greet := actions[1].(map[string]any)
		if greet["action"] != "greet" || greet["input_schema"] == nil || greet["timeout"] != "10s" {
			t.Fatalf("greet action %v", greet)
		}
		list := e.call("GET", "/api/w/ws/apps", adminToken, "").want(200).obj()["apps"].([]any)
		if len(list) != 1 {
			t.Fatalf("apps %v", list)
		}
		e.call("GET", "/api/w/ws/apps/nope", adminToken, "").wantError(404, "not_found")
		if l := e.call("GET", "/api/w/other/apps", adminToken, "").want(200).obj()["apps"].([]any); len(l) != 0 {
			t.Fatalf("other workspace's apps %v", l)
		}
	})
}
