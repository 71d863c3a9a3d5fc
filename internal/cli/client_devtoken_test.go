package cli

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

// TestDevTokenOnlyForThisMachine: without a token, a client of a server on
// this machine uses the admin token `windforce dev` keeps in --dir
// (WINDFORCE_DIR); a client of another host never reads it.
func TestDevTokenOnlyForThisMachine(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "admin-token"), []byte("wfdev_x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ url, want string }{
		{"http://127.0.0.1:8080", "wfdev_x"},
		{"http://localhost:9", "wfdev_x"},
		{"https://windforce.example.com", ""},
		{"http://10.0.0.5:8080", ""},
	} {
		u, _ := url.Parse(c.url)
		if got := devToken(u, dir); got != c.want {
			t.Errorf("devToken(%s) = %q, want %q", c.url, got, c.want)
		}
	}
	cf := &clientFlags{config: config{url: "http://127.0.0.1:8080", token: "given", workspace: "default", dir: dir}}
	if cl, err := cf.newClient(); err != nil || cl.token != "given" {
		t.Fatalf("a given token wins: %v %v", cl, err)
	}
	u, _ := url.Parse("http://127.0.0.1:8080")
	if got := devToken(u, t.TempDir()); got != "" {
		t.Fatalf("no kept token: got %q", got)
	}
}

// TestAPIErrorTransient: a log stream retries a proxy hiccup (5xx) or
// rate limiting, not a refusal.
func TestAPIErrorTransient(t *testing.T) {
	for status, want := range map[int]bool{502: true, 503: true, 500: true, 429: true, 401: false, 404: false, 422: false} {
		if got := (&APIError{Status: status}).transient(); got != want {
			t.Errorf("status %d transient = %t, want %t", status, got, want)
		}
	}
}

// TestKeptSecretKeepsAGivenToken: a token given to dev is written where
// the client looks, so the client never sends a stale generated one.
func TestKeptSecretKeepsAGivenToken(t *testing.T) {
	dir := t.TempDir()
	first, err := keptSecret(dir, "admin-token", "")
	if err != nil || first == "" {
		t.Fatalf("generated %q, %v", first, err)
	}
	if got, err := keptSecret(dir, "admin-token", "given"); err != nil || got != "given" {
		t.Fatalf("given: %q, %v", got, err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "admin-token"))
	if string(data) != "given\n" {
		t.Fatalf("kept %q, want the given token", data)
	}
}
