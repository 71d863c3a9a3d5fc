package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/windforce/windforce/internal/gittest"
)

// deploy posts files to the app's deploy route and returns the response.
func (e *env) deploy(app string, files map[string]string, extra ...string) *resp {
	e.t.Helper()
	body := map[string]any{"files": files, "message": "deploy from test"}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i]] = extra[i+1]
	}
	data, err := json.Marshal(body)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.call("POST", "/api/w/ws/apps/"+app+"/deploy", adminToken, string(data))
}

// TestDeploy commits files through the API to the source's branch, which
// is then synced: the answer is sync's, the commit is on the remote with
// its author and message, and the catalog pins it. Bad paths are 400, an
// unknown app 404, and a commit the sync refuses is 422 with the catalog
// left as it was.
func TestDeploy(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		out := e.deploy("hello", map[string]string{"README.md": "changed\n", "docs/new.md": "new\n"},
			"author", "Ada Lovelace <ada@example.com>", "message", "update the readme").want(http.StatusOK).obj()
		commit, _ := out["commit"].(string)
		if commit == "" || commit == e.sync1["commit"] {
			t.Fatalf("deploy answered commit %v (first sync %v)", out["commit"], e.sync1["commit"])
		}
		apps, _ := out["apps"].([]any)
		if len(apps) != 1 || apps[0].(map[string]any)["app"] != "hello" {
			t.Fatalf("deploy answered apps %v", out["apps"])
		}
		head := gittest.Git(t, e.repo.Bare, "log", "-1", "--format=%H|%an <%ae>|%s", "main")
		if head != commit+"|Ada Lovelace <ada@example.com>|update the readme" {
			t.Fatalf("remote head %q, want commit %s by Ada with the message", head, commit)
		}
		if got := gittest.Git(t, e.repo.Bare, "show", "main:docs/new.md"); got != "new" {
			t.Fatalf("docs/new.md on the remote: %q", got)
		}
		app := e.call("GET", "/api/w/ws/apps/hello", adminToken, "").want(http.StatusOK).obj()
		if app["commit_sha"] != commit {
			t.Fatalf("catalog pins %v after the deploy, want %s", app["commit_sha"], commit)
		}

		for _, p := range []string{"../escape.txt", "/etc/passwd", ".git/config", "a/../../b", "", "a/./b", `a\b`, "."} {
			e.deploy("hello", map[string]string{p: "x"}).wantError(http.StatusBadRequest, "bad_request")
		}
		e.deploy("hello", map[string]string{}).wantError(http.StatusBadRequest, "bad_request")
		e.call("POST", "/api/w/ws/apps/hello/deploy", adminToken, `{"files":{"a":1}}`).wantError(http.StatusBadRequest, "bad_request")
		e.deploy("nope", map[string]string{"README.md": "x"}).wantError(http.StatusNotFound, "not_found")
		if got := gittest.Git(t, e.repo.Bare, "rev-parse", "main"); got != commit {
			t.Fatalf("a refused deploy moved the branch to %s", got)
		}

		details := e.deploy("hello", map[string]string{"windforce.yaml": "apps: [\n"}).wantError(http.StatusUnprocessableEntity, "sync_failed")
		if details["source"] != "main" {
			t.Fatalf("sync failure details %v", details)
		}
		app = e.call("GET", "/api/w/ws/apps/hello", adminToken, "").want(http.StatusOK).obj()
		if app["commit_sha"] != commit || len(app["actions"].([]any)) != 3 {
			t.Fatalf("catalog changed by a refused deploy: %v", app)
		}
		src := e.call("GET", "/api/w/ws/sources", adminToken, "").want(http.StatusOK).obj()["sources"].([]any)[0].(map[string]any)
		if src["commit"] != commit || !strings.Contains(src["error"].(string), "windforce.yaml") {
			t.Fatalf("source after a refused deploy: %v", src)
		}
	})
}

// TestDeployPushRefused: a push the remote refuses (here its pre-receive
// hook; in life, mostly the branch moving meanwhile) is 409 with git's
// words, and the catalog stays on its commit.
func TestDeployPushRefused(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		hook := filepath.Join(e.repo.Bare, "hooks", "pre-receive")
		if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'frozen for the release' >&2\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		details := e.deploy("hello", map[string]string{"README.md": "changed\n"}).wantError(http.StatusConflict, "conflict")
		if !strings.Contains(fmt.Sprint(details["git"]), "frozen for the release") {
			t.Fatalf("details %v do not carry git's words", details)
		}
		app := e.call("GET", "/api/w/ws/apps/hello", adminToken, "").want(http.StatusOK).obj()
		if app["commit_sha"] != e.sync1["commit"] {
			t.Fatalf("catalog pins %v after a refused push, want %v", app["commit_sha"], e.sync1["commit"])
		}
	})
}
