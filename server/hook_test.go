package server_test

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hookSecret is the source's hook secret in these tests.
const hookSecret = "It's a Secret to Everybody, 0123"

// hookBody reads a sample payload of testdata/hooks, as the hosts document
// them.
func hookBody(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "hooks", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// hexMAC is the hex HMAC of body keyed by secret.
func hexMAC(secret, body string, h func() hash.Hash) string {
	m := hmac.New(h, []byte(secret))
	m.Write([]byte(body))
	return hex.EncodeToString(m.Sum(nil))
}

// githubHeaders are the headers GitHub sends with a delivery of event
// signed with secret.
func githubHeaders(event, secret, body string) []string {
	return []string{
		"Content-Type", "application/json",
		"User-Agent", "GitHub-Hookshot/044aadd",
		"X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958",
		"X-GitHub-Event", event,
		"X-GitHub-Hook-ID", "292430182",
		"X-GitHub-Hook-Installation-Target-ID", "79929171",
		"X-GitHub-Hook-Installation-Target-Type", "repository",
		"X-Hub-Signature", "sha1=" + hexMAC(secret, body, sha1.New),
		"X-Hub-Signature-256", "sha256=" + hexMAC(secret, body, sha256.New),
	}
}

// gitlabHeaders are the headers GitLab sends with a delivery of event
// whose secret token is token.
func gitlabHeaders(event, token string) []string {
	return []string{
		"Content-Type", "application/json",
		"User-Agent", "GitLab/17.6.0",
		"X-Gitlab-Event", event,
		"X-Gitlab-Token", token,
		"X-Gitlab-Instance", "https://gitlab.example.com",
		"X-Gitlab-Webhook-UUID", "5b0d5d56-7b5f-4a08-a2f9-0f7b5c1f8a11",
		"X-Gitlab-Event-UUID", "13792a34-cac6-4fda-95a8-c58e00a3954e",
	}
}

// giteaHeaders are the headers Gitea sends with a push signed with
// secret: its own, and GitHub's and Gogs's for compatibility.
func giteaHeaders(secret, body string) []string {
	sig := hexMAC(secret, body, sha256.New)
	return []string{
		"Content-Type", "application/json",
		"X-Gitea-Delivery", "f6266f16-1bf3-46a5-9ea4-602e06ead473",
		"X-Gitea-Event", "push",
		"X-Gitea-Event-Type", "push",
		"X-Gitea-Signature", sig,
		"X-Gogs-Delivery", "f6266f16-1bf3-46a5-9ea4-602e06ead473",
		"X-Gogs-Event", "push",
		"X-Gogs-Signature", sig,
		"X-GitHub-Delivery", "f6266f16-1bf3-46a5-9ea4-602e06ead473",
		"X-GitHub-Event", "push",
		"X-Hub-Signature-256", "sha256=" + sig,
	}
}

// sourceCommit is the commit source main holds now.
func (e *env) sourceCommit() string {
	e.t.Helper()
	for _, s := range e.call("GET", "/api/w/ws/sources", adminToken, "").want(200).obj()["sources"].([]any) {
		if src := s.(map[string]any); src["id"] == "main" {
			return src["commit"].(string)
		}
	}
	e.t.Fatal("no source main")
	return ""
}

// newCommit pushes a commit to the source's branch that a sync accepts.
func (e *env) newCommit(t *testing.T, note string) string {
	t.Helper()
	e.repo.Write(t, map[string]string{"NOTES.md": note + "\n"})
	return e.repo.CommitPush(t, note)
}

// TestHookFromGitHosts: GitHub, GitLab and Gitea/Forgejo call the push
// hook with their own proofs, headers and payloads as they document them;
// a push to the source's branch syncs, other events and branches are 202
// and sync nothing, ping is 200, and a bad or missing proof is 401 and
// syncs nothing.
func TestHookFromGitHosts(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		const hook = "/api/w/ws/sources/main/hook"
		push := hookBody(t, "github_push.json")
		first := e.sourceCommit()
		head := e.newCommit(t, "one")

		// No secret yet: even a well-formed signature is refused.
		e.call("POST", hook, "", push, githubHeaders("push", hookSecret, push)...).wantError(401, "unauthorized")
		v := e.call("PUT", "/api/w/ws/sources/main/hook-secret", adminToken, `{"hook_secret":"`+hookSecret+`"}`).want(200)
		if v.obj()["hook_secret_set"] != true || strings.Contains(string(v.body), hookSecret) {
			t.Fatalf("hook-secret answered %s", v.body)
		}
		if l := e.call("GET", "/api/w/ws/sources", adminToken, ""); strings.Contains(string(l.body), hookSecret) {
			t.Fatalf("sources show the secret: %s", l.body)
		}

		// Bad or missing proofs: 401, nothing synced.
		e.call("POST", hook, "", push).wantError(401, "unauthorized")
		e.call("POST", hook, "", push, githubHeaders("push", "the wrong secret, 0123456", push)...).wantError(401, "unauthorized")
		tampered := strings.Replace(push, "octocat", "mallory", 1)
		e.call("POST", hook, "", tampered, githubHeaders("push", hookSecret, push)...).wantError(401, "unauthorized")
		e.call("POST", hook, "", push, "X-GitHub-Event", "push", "X-Hub-Signature-256", hexMAC(hookSecret, push, sha256.New)).
			wantError(401, "unauthorized") // no "sha256=" prefix
		e.call("POST", hook, "", push, gitlabHeaders("Push Hook", hookSecret+"x")...).wantError(401, "unauthorized")
		e.call("POST", hook, "", push, giteaHeaders("the wrong secret, 0123456", push)...).wantError(401, "unauthorized")
		e.call("POST", "/api/w/ws/sources/nope/hook", "", push, githubHeaders("push", hookSecret, push)...).wantError(401, "unauthorized")
		e.call("POST", "/api/w/other/sources/main/hook", "", push, githubHeaders("push", hookSecret, push)...).wantError(401, "unauthorized")
		if got := e.sourceCommit(); got != first {
			t.Fatalf("a refused hook synced: commit %s, want %s", got, first)
		}

		// Authentic but nothing to sync: ping 200, other events and refs 202.
		ping := hookBody(t, "github_ping.json")
		if r := e.call("POST", hook, "", ping, githubHeaders("ping", hookSecret, ping)...).want(200).obj(); r["ping"] != "ok" {
			t.Fatalf("ping answered %v", r)
		}
		e.call("POST", hook, "", push, githubHeaders("issues", hookSecret, push)...).want(202)
		other := strings.Replace(push, `"ref": "refs/heads/main"`, `"ref": "refs/heads/dev"`, 1)
		if r := e.call("POST", hook, "", other, githubHeaders("push", hookSecret, other)...).want(202).obj(); r["ignored"] != true {
			t.Fatalf("push to dev answered %v", r)
		}
		deleted := strings.Replace(strings.Replace(push, `"deleted": false`, `"deleted": true`, 1),
			`"after": "59b20b8d5c6ff8d09518454d4dd8b7a30f095ab5"`, `"after": "0000000000000000000000000000000000000000"`, 1)
		e.call("POST", hook, "", deleted, githubHeaders("push", hookSecret, deleted)...).want(202)
		tag := hookBody(t, "gitlab_tag_push.json")
		e.call("POST", hook, "", tag, gitlabHeaders("Tag Push Hook", hookSecret)...).want(202)
		if got := e.sourceCommit(); got != first {
			t.Fatalf("an ignored hook synced: commit %s, want %s", got, first)
		}

		// GitHub's push to main syncs the branch head.
		if r := e.call("POST", hook, "", push, githubHeaders("push", hookSecret, push)...).want(200).obj(); r["commit"] != head {
			t.Fatalf("GitHub push answered %v, want commit %s", r, head)
		}
		// GitLab's.
		head = e.newCommit(t, "two")
		gl := hookBody(t, "gitlab_push.json")
		if r := e.call("POST", hook, "", gl, gitlabHeaders("Push Hook", hookSecret)...).want(200).obj(); r["commit"] != head {
			t.Fatalf("GitLab push answered %v, want commit %s", r, head)
		}
		// Gitea's, then Forgejo's own headers.
		head = e.newCommit(t, "three")
		gt := hookBody(t, "gitea_push.json")
		if r := e.call("POST", hook, "", gt, giteaHeaders(hookSecret, gt)...).want(200).obj(); r["commit"] != head {
			t.Fatalf("Gitea push answered %v, want commit %s", r, head)
		}
		head = e.newCommit(t, "four")
		fj := []string{"Content-Type", "application/json", "X-Forgejo-Event", "push",
			"X-Forgejo-Signature", hexMAC(hookSecret, gt, sha256.New)}
		if r := e.call("POST", hook, "", gt, fj...).want(200).obj(); r["commit"] != head {
			t.Fatalf("Forgejo push answered %v, want commit %s", r, head)
		}
		// GitHub's form content type: the JSON is the "payload" field.
		head = e.newCommit(t, "five")
		form := "payload=" + url.QueryEscape(push)
		hdr := append(githubHeaders("push", hookSecret, form), "Content-Type", "application/x-www-form-urlencoded")
		if r := e.call("POST", hook, "", form, hdr...).want(200).obj(); r["commit"] != head {
			t.Fatalf("GitHub form push answered %v, want commit %s", r, head)
		}

		// Cleared, the old secret stops working.
		e.newCommit(t, "six")
		v = e.call("PUT", "/api/w/ws/sources/main/hook-secret", adminToken, `{"hook_secret":""}`).want(200)
		if v.obj()["hook_secret_set"] != false {
			t.Fatalf("cleared hook-secret answered %s", v.body)
		}
		e.call("POST", hook, "", push, githubHeaders("push", hookSecret, push)...).wantError(401, "unauthorized")
		if got := e.sourceCommit(); got != head {
			t.Fatalf("a hook after the secret was cleared synced: commit %s, want %s", got, head)
		}
	})
}

// TestHookSecretInput: a hook secret is set on create or later, refused
// with 422 (and nothing stored) when a host could not send it back, and
// kept when a source is updated without one.
func TestHookSecretInput(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		const put = "/api/w/ws/sources/main/hook-secret"
		e.call("PUT", put, adminToken, `{"hook_secret":"short"}`).wantError(422, "invalid_input")
		e.call("PUT", put, adminToken, `{"hook_secret":" padded secret 0123456 "}`).wantError(422, "invalid_input")
		e.call("PUT", put, adminToken, `{}`).wantError(422, "invalid_input")
		e.call("PUT", "/api/w/ws/sources/nope/hook-secret", adminToken, `{"hook_secret":"`+hookSecret+`"}`).wantError(404, "not_found")
		e.call("PUT", put, "", `{"hook_secret":"`+hookSecret+`"}`).wantError(401, "unauthorized")

		e.call("POST", "/api/w/ws/sources", adminToken,
			`{"id":"gh","url":"`+e.repo.URL+`","hook_secret":"tiny"}`).wantError(422, "invalid_input")
		if l := e.call("GET", "/api/w/ws/sources", adminToken, "").want(200).obj()["sources"].([]any); len(l) != 1 {
			t.Fatalf("refused source stored: %v", l)
		}
		src := e.call("POST", "/api/w/ws/sources", adminToken,
			`{"id":"gh","url":"`+e.repo.URL+`","hook_secret":"`+hookSecret+`"}`).want(201).obj()
		if src["hook_secret_set"] != true {
			t.Fatalf("source created with a hook secret: %v", src)
		}
		// An update without hook_secret keeps it: the host keeps working.
		src = e.call("POST", "/api/w/ws/sources", adminToken, `{"id":"gh","url":"`+e.repo.URL+`","branch":"dev"}`).want(201).obj()
		if src["hook_secret_set"] != true || src["branch"] != "dev" {
			t.Fatalf("source updated without a hook secret: %v", src)
		}
		push := hookBody(t, "github_push.json")
		r := e.call("POST", "/api/w/ws/sources/gh/hook", "", push, githubHeaders("push", hookSecret, push)...).want(202).obj()
		if !strings.Contains(r["reason"].(string), "dev") {
			t.Fatalf("push to main of a dev source answered %v", r)
		}
	})
}
