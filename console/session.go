package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/windforce/windforce/auth"
)

// sessionCookie is the name of the console's session cookie.
const sessionCookie = "wf_session"

// session is what the signed cookie carries: the id of a server-side
// session (console_session, auth.Session), never the token. Every request
// reads that row and its token again, so logout and revocation end the
// session for every copy of the cookie; the signature only keeps forged
// ids and CSRF tokens out before the database is asked.
type session struct {
	// ID is the session's random id; the store keeps only its hash.
	ID string `json:"i"`
	// Expires is the session's end, Unix seconds.
	Expires int64 `json:"e"`
	// CSRF is the session's anti-forgery token, required on every POST.
	CSRF string `json:"c"`
	// Recent lists workspaces an all-workspace token visited, newest first.
	Recent []string `json:"r,omitempty"`
}

// errBadSession is any cookie that does not verify: tampered, expired,
// signed with another secret or malformed.
var errBadSession = errors.New("invalid or expired session")

// newSession draws the cookie of a new session of tok from now for ttl,
// and the row the store keeps for it.
func newSession(tok auth.Token, now time.Time, ttl time.Duration) (session, auth.Session, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return session{}, auth.Session{}, fmt.Errorf("new session: %w", err)
	}
	id, idHash, err := auth.NewSessionID()
	if err != nil {
		return session{}, auth.Session{}, err
	}
	row := auth.Session{IDHash: idHash, TokenHash: tok.Hash, TokenID: tok.ID, CreatedAt: now, ExpiresAt: now.Add(ttl)}
	return session{ID: id, Expires: row.ExpiresAt.Unix(), CSRF: hex.EncodeToString(b[:])}, row, nil
}

// sign encodes s as base64(json) "." base64(HMAC-SHA256(secret, json)).
func (s session) sign(secret []byte) (string, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encode session: %w", err)
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(data) + "." + enc.EncodeToString(mac(secret, data)), nil
}

func mac(secret, data []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("windforce-console-session\x00"))
	m.Write(data)
	return m.Sum(nil)
}

// parseSession verifies a cookie value and its expiry.
func parseSession(secret []byte, value string, now time.Time) (session, error) {
	enc := base64.RawURLEncoding
	body, sig, ok := strings.Cut(value, ".")
	if !ok {
		return session{}, errBadSession
	}
	data, err1 := enc.DecodeString(body)
	got, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(got, mac(secret, data)) {
		return session{}, errBadSession
	}
	var s session
	if err := json.Unmarshal(data, &s); err != nil || s.ID == "" || s.CSRF == "" {
		return session{}, errBadSession
	}
	if now.Unix() >= s.Expires {
		return session{}, errBadSession
	}
	return s, nil
}

// setSession writes s as the session cookie: HttpOnly (no script reads
// it), SameSite=Strict (no other site sends it), Secure when the request
// came over TLS.
func (c *Console) setSession(w http.ResponseWriter, r *http.Request, s session) error {
	v, err := s.sign(c.cfg.Secret)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: v, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: overTLS(r), Expires: time.Unix(s.Expires, 0)})
	return nil
}

// clearSession removes the session cookie.
func clearSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: overTLS(r), MaxAge: -1})
}

// checkCSRF accepts a POST only with the session's CSRF token, in the
// X-CSRF-Token header (htmx sends it from hx-headers) or the csrf form
// field (plain forms).
func checkCSRF(r *http.Request, s session) bool {
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = r.PostFormValue("csrf")
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.CSRF)) == 1
}

// overTLS reports whether the browser reached the console over HTTPS:
// directly, or through a TLS-terminating proxy that says so. Trusting the
// header is safe here: it can only make the cookie stricter.
func overTLS(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}
