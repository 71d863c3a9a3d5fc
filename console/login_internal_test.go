package console

import (
	"net/http/httptest"
	"testing"
)

// TestSafeNext: a post-login redirect stays on this console; browser URL
// clean-up (tabs and newlines dropped, "\" read as "/") must not turn a
// path into another host.
func TestSafeNext(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/w/ws/runs?status=failure", "/w/ws/runs?status=failure"},
		{"/", "/"},
		{"", ""},
		{"runs", ""},
		{"//evil.example/x", ""},
		{"/\\evil.example/x", ""},
		{"/\t/evil.example/x", ""},
		{"/\n/evil.example/x", ""},
		{"/\r/evil.example", ""},
		{"/ /evil.example", ""},
		{"https://evil.example/", ""},
		{"/\x7f/evil.example", ""},
	} {
		if got := safeNext(c.in); got != c.want {
			t.Errorf("safeNext(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestSameOriginRefusesNullOrigin: an opaque origin is cross-site.
func TestSameOriginRefusesNullOrigin(t *testing.T) {
	r := httptest.NewRequest("POST", "http://console.test/login", nil)
	r.Header.Set("Origin", "null")
	if sameOrigin(r) {
		t.Fatal("Origin: null passed as same-origin")
	}
	r.Header.Set("Origin", "http://console.test")
	if !sameOrigin(r) {
		t.Fatal("own origin refused")
	}
}

// TestOverTLS: the session cookie is Secure behind a TLS-terminating proxy.
func TestOverTLS(t *testing.T) {
	r := httptest.NewRequest("GET", "http://console.test/", nil)
	if overTLS(r) {
		t.Fatal("plain HTTP seen as TLS")
	}
	r.Header.Set("X-Forwarded-Proto", "https")
	if !overTLS(r) {
		t.Fatal("X-Forwarded-Proto: https not honoured")
	}
}
