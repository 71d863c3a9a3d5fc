package source_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/windforce/windforce/source"
)

// TestValidateRemote: only https://, ssh://, user@host:path and
// file:///path are accepted; every other form git would run (a plain
// path, ext::, fd::, options) is refused before git sees it.
func TestValidateRemote(t *testing.T) {
	t.Parallel()
	good := []string{
		"file:///srv/repo.git", "https://github.com/a/b.git", "https://host:8443/a/b.git",
		"ssh://git@host/a/b.git", "ssh://host:2222/a/b.git", "git@github.com:a/b.git", "host:a/b.git",
	}
	for _, g := range good {
		if err := source.ValidateRemote(g, "release/1.x"); err != nil {
			t.Errorf("ValidateRemote(%q): %v", g, err)
		}
	}
	bad := []string{
		"", "ext::sh -c touch% /tmp/pwned", "fd::17", "git@host::x", "host::x", "/srv/repo.git", "./repo", "../repo", "repo",
		"file:/srv/repo.git", "file:srv", "file://", "file://host/srv/r.git", "file://./r", "-uhost:x", "--upload-pack=touch /tmp/x",
		"git@host:-oProxyCommand=x", "ssh://-oProxyCommand=x/r", "ssh://-u@host/r", "ssh://host/r\n", "https:///r.git",
		"http://host/r.git", "git://host/r.git", "ftp://host/r", "SSH://host/r", "git+ssh://host/r", "[::1]:r",
	}
	for _, b := range bad {
		err := source.ValidateRemote(b, "main")
		var re *source.RefusedError
		if !errors.As(err, &re) {
			t.Errorf("ValidateRemote(%q) = %v, want a *RefusedError", b, err)
		}
	}
	for _, br := range []string{"--upload-pack=x", "a..b", "", "x/", "x.lock", "-b"} {
		if err := source.ValidateRemote("file:///r", br); err == nil {
			t.Errorf("branch %q accepted", br)
		}
	}
}

// TestCredentialsRefused: a token as the user part, a password, a query
// or a fragment is refused with where credentials belong, and the error
// never repeats the secret.
func TestCredentialsRefused(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"https://ghp_secret@github.com/a/b.git", "https://user:secret@host/r.git", "https://oauth2:secret@host/r.git",
		"https://host/r.git?access_token=secret", "https://host/r.git#secret", "https://host/r.git?",
		"ssh://git:secret@host/r.git", "ssh://host/r.git?secret", "user:secret@host:r.git", "git@host:r.git?secret",
		"file:///srv/r.git?secret", "https://us%3Aer:secret@host/r.git", "https://user:sec ret@host/r",
		"ghp_secret@github.com:o/r.git", "ssh://glpat-secret@gitlab.com/o/r.git",
		"ssh://secretsecretsecretsecretsecretsecret@host/r.git",
	} {
		err := source.ValidateRemote(u, "main")
		if !errors.Is(err, source.ErrCredentialsInURL) {
			t.Errorf("ValidateRemote(%q) = %v, want ErrCredentialsInURL", u, err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "secret") || !strings.Contains(msg, "credential helper") || !strings.Contains(msg, "ssh key") {
			t.Errorf("ValidateRemote(%q) says %q: want no secret and where credentials belong", u, msg)
		}
	}
}

// TestRedact: credentials are hidden wherever a URL is shown; a plain ssh
// user is kept.
func TestRedact(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://ghp_x@github.com/a/b.git":      "https://***@github.com/a/b.git",
		"https://user:pw@host/r.git":            "https://***@host/r.git",
		"https://host/r.git?access_token=x&b=2": "https://host/r.git?***",
		"https://host/r.git#frag":               "https://host/r.git#***",
		"https://u:p@host/r@x/y?q":              "https://***@host/r@x/y?***",
		"ssh://git@host/a.git":                  "ssh://git@host/a.git",
		"ssh://git:pw@host/a.git":               "ssh://***@host/a.git",
		"ssh://ghp_x@github.com/a.git":          "ssh://***@github.com/a.git",
		"git@github.com:a/b.git":                "git@github.com:a/b.git",
		"user:pw@host:r.git":                    "***@host:r.git",
		"file:///srv/a@b/r.git":                 "file:///srv/a@b/r.git",
		"https://github.com/a/b.git":            "https://github.com/a/b.git",
		"HTTPS://tok@host/r":                    "HTTPS://***@host/r",
		"https://tok@host":                      "https://***@host",
		"not a url":                             "not a url",
	} {
		if got := source.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	msg := "fatal: unable to access 'https://ghp_tok@host/r.git/': The requested URL returned error: 403\n" +
		"fatal: repository https://host/r.git?access_token=tok2 not found"
	got := source.RedactText(msg)
	if strings.Contains(got, "tok") || !strings.Contains(got, "'https://***@host/r.git/'") || !strings.Contains(got, "https://host/r.git?*** not found") {
		t.Errorf("RedactText = %q", got)
	}
}
