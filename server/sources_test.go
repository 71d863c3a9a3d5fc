package server_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/internal/gittest"
	"github.com/windforce/windforce/server"
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

// asServer serves a second API over e's store (the catalog is already
// synced) configured like `windforce server` with
// WINDFORCE_FILE_SOURCES=dirs, and returns an env that talks to it.
func (e *env) asServer(t *testing.T, dirs ...string) *env {
	t.Helper()
	return e.second(t, func(c *server.Config) { c.Syncer.AnyFileSource, c.Syncer.FileSources = false, dirs })
}

// message is the error message of an error answer.
func (r *resp) message() string {
	r.t.Helper()
	var body struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil {
		r.t.Fatalf("error body %s: %v", r.body, err)
	}
	return body.Error.Message
}

// TestFileSourceAcrossWorkspaces: on a server, workspace "other" cannot
// add ws's repository by its file:// path (it would read ws's code and
// push into ws's repository); ws's own source, stored while any path was
// allowed, is then neither synced nor deployed to, and the repository's
// refs stay as they were.
func TestFileSourceAcrossWorkspaces(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		srv := e.asServer(t, t.TempDir())
		r := srv.call("POST", "/api/w/other/sources", adminToken, `{"id":"steal","url":"`+e.repo.URL+`"}`)
		r.wantError(422, "invalid_input")
		if msg := r.message(); !strings.Contains(msg, "WINDFORCE_FILE_SOURCES") {
			t.Fatalf("refusal %q does not name WINDFORCE_FILE_SOURCES", msg)
		}
		if l := srv.call("GET", "/api/w/other/sources", adminToken, "").want(200).obj()["sources"].([]any); len(l) != 0 {
			t.Fatalf("refused source stored: %v", l)
		}

		before := gittest.Git(t, e.repo.Bare, "for-each-ref", "--format=%(refname) %(objectname)")
		d := srv.call("POST", "/api/w/ws/sources/main/sync", adminToken, "").wantError(422, "sync_failed")
		if d["step"] != "fetch" {
			t.Fatalf("sync details %v", d)
		}
		dr := srv.deploy("hello", map[string]string{"pwned.txt": "x"})
		dr.wantError(422, "invalid_input")
		if msg := dr.message(); !strings.Contains(msg, "WINDFORCE_FILE_SOURCES") {
			t.Fatalf("deploy refusal %q", msg)
		}
		if after := gittest.Git(t, e.repo.Bare, "for-each-ref", "--format=%(refname) %(objectname)"); after != before {
			t.Fatalf("refused deploy changed the repository:\n%s\nwant\n%s", after, before)
		}

		// The same repository is fine once its folder is listed.
		ok := e.asServer(t, filepath.Dir(e.repo.Bare))
		ok.call("POST", "/api/w/ws/sources/main/sync", adminToken, "").want(200)
	})
}

// TestSourceCredentials: a token as the user part or in the query is
// refused with where credentials belong, never echoed; a plain ssh user
// is fine; a row stored with credentials before is shown redacted.
func TestSourceCredentials(t *testing.T) {
	t.Parallel()
	e := newSQLiteEnv(t)
	for _, u := range []string{"https://ghp_secret@github.com/a/b.git", "https://github.com/a/b.git?access_token=secret",
		"https://user:secret@github.com/a/b.git"} {
		r := e.call("POST", "/api/w/ws/sources", adminToken, `{"id":"x","url":"`+u+`"}`)
		r.wantError(422, "invalid_input")
		if msg := r.message(); strings.Contains(string(r.body), "secret") || !strings.Contains(msg, "credential helper") {
			t.Errorf("add %s answered %s", u, r.body)
		}
	}
	for _, u := range []string{"ssh://git@github.com/a/b.git", "git@github.com:a/b.git"} {
		v := e.call("POST", "/api/w/ws/sources", adminToken, `{"id":"ssh","url":"`+u+`"}`).want(201).obj()
		if v["url"] != u {
			t.Errorf("ssh source shows %v, want %s", v["url"], u)
		}
	}
	stored := "https://ghp_secret@github.com/a/b.git?access_token=secret"
	if err := e.db.PutSource(t.Context(), catalog.Source{Workspace: ws, ID: "old", URL: stored, Branch: "main"}); err != nil {
		t.Fatal(err)
	}
	if err := e.db.RecordSyncError(t.Context(), ws, "old", "fetch failed: git fetch: fatal: unable to access '"+stored+"': 403"); err != nil {
		t.Fatal(err)
	}
	body := e.call("GET", "/api/w/ws/sources", adminToken, "").want(200)
	// "secret" alone is in every source's "hook_secret_set" field.
	if strings.Contains(string(body.body), "ghp_secret") || strings.Contains(string(body.body), "=secret") ||
		!strings.Contains(string(body.body), "https://***@github.com/a/b.git?***") {
		t.Fatalf("sources show %s", body.body)
	}
}
