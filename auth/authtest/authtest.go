// Package authtest is the conformance suite of auth.Store: API tokens
// and console sessions, run over the store core on each database on a fresh
// database per subtest, so both stores keep the same contract.
package authtest

import (
	"errors"
	"testing"
	"time"

	"github.com/windforce/windforce/auth"
)

// Run runs the suite; newStore returns a migrated store of its own.
func Run(t *testing.T, newStore func(t *testing.T) auth.Store) {
	t.Run("token by id", func(t *testing.T) { t.Parallel(); tokenByID(t, newStore(t)) })
	t.Run("no stored token is the bootstrap admin", func(t *testing.T) { t.Parallel(); adminID(t, newStore(t)) })
	t.Run("session lifecycle", func(t *testing.T) { t.Parallel(); sessionLifecycle(t, newStore(t)) })
	t.Run("revocation ends sessions", func(t *testing.T) { t.Parallel(); revokeEndsSessions(t, newStore(t)) })
	t.Run("login deletes expired sessions", func(t *testing.T) { t.Parallel(); expiredDeleted(t, newStore(t)) })
}

// newToken stores a fresh token.
func newToken(t *testing.T, s auth.Store, label string) auth.Token {
	t.Helper()
	_, tok, err := auth.NewToken("ws", label, []auth.Scope{auth.ScopeRun})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateToken(t.Context(), tok); err != nil {
		t.Fatalf("create token: %v", err)
	}
	return tok
}

// newSession stores a session of tok from now for ttl.
func newSession(t *testing.T, s auth.Store, tok auth.Token, now time.Time, ttl time.Duration) auth.Session {
	t.Helper()
	_, hash, err := auth.NewSessionID()
	if err != nil {
		t.Fatal(err)
	}
	sess := auth.Session{IDHash: hash, TokenHash: tok.Hash, TokenID: tok.ID, CreatedAt: now, ExpiresAt: now.Add(ttl)}
	if err := s.CreateSession(t.Context(), sess); err != nil {
		t.Fatalf("create session: %v", err)
	}
	return sess
}

func session(t *testing.T, s auth.Store, hash string) auth.Session {
	t.Helper()
	got, err := s.SessionByHash(t.Context(), hash)
	if err != nil {
		t.Fatalf("session by hash: %v", err)
	}
	return got
}

// tokenByID finds a token by id with its label, and still after it was
// revoked (RevokedAt set); an unknown id is ErrNotFound.
func tokenByID(t *testing.T, s auth.Store) {
	tok := newToken(t, s, "schedule:x")
	got, err := s.TokenByID(t.Context(), tok.ID)
	if err != nil || got.Label != "schedule:x" || got.Hash != tok.Hash || got.Workspace != "ws" || !got.RevokedAt.IsZero() {
		t.Fatalf("TokenByID = %+v, %v", got, err)
	}
	if err := s.RevokeToken(t.Context(), tok.ID); err != nil {
		t.Fatal(err)
	}
	got, err = s.TokenByID(t.Context(), tok.ID)
	if err != nil || got.Label != "schedule:x" || got.RevokedAt.IsZero() {
		t.Fatalf("TokenByID of a revoked token = %+v, %v", got, err)
	}
	if _, err := s.TokenByHash(t.Context(), tok.Hash); !errors.Is(err, auth.ErrNotFound) {
		t.Fatalf("TokenByHash of a revoked token: %v", err)
	}
	if _, err := s.TokenByID(t.Context(), "ffff"); !errors.Is(err, auth.ErrNotFound) {
		t.Fatalf("TokenByID of an unknown id: %v", err)
	}
}

// adminID: a token record with the bootstrap admin's id (or any id
// NewToken could not draw) is refused, so "token:admin" stays unique.
func adminID(t *testing.T, s auth.Store) {
	_, tok, err := auth.NewToken("ws", "admin", []auth.Scope{auth.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{auth.AdminID, "Admin", "schedule:1"} {
		tok.ID = id
		if err := s.CreateToken(t.Context(), tok); !errors.Is(err, auth.ErrInvalidID) {
			t.Errorf("CreateToken with id %q: %v, want ErrInvalidID", id, err)
		}
	}
	if _, err := s.TokenByID(t.Context(), auth.AdminID); !errors.Is(err, auth.ErrNotFound) {
		t.Fatalf("a stored token has id admin: %v", err)
	}
}

// sessionLifecycle: a session reads back as stored, ends once (the first
// ended_at stays), and an unknown hash is ErrSessionNotFound.
func sessionLifecycle(t *testing.T, s auth.Store) {
	now := time.Now().UTC().Truncate(time.Second)
	boot := auth.Bootstrap(auth.Hash("bootstrap-text"))
	sess := newSession(t, s, boot, now, time.Hour)
	got := session(t, s, sess.IDHash)
	if got.TokenHash != boot.Hash || got.TokenID != auth.AdminID || !got.CreatedAt.Equal(now) ||
		!got.ExpiresAt.Equal(now.Add(time.Hour)) || !got.EndedAt.IsZero() || !got.Live(now) {
		t.Fatalf("session read back %+v", got)
	}
	if err := s.EndSession(t.Context(), sess.IDHash, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.EndSession(t.Context(), sess.IDHash, now.Add(2*time.Minute)); err != nil {
		t.Fatalf("ending an ended session: %v", err)
	}
	if got := session(t, s, sess.IDHash); !got.EndedAt.Equal(now.Add(time.Minute)) || got.Live(now.Add(time.Minute)) {
		t.Fatalf("ended session %+v", got)
	}
	if err := s.EndSession(t.Context(), auth.Hash("unknown"), now); err != nil {
		t.Fatalf("ending an unknown session: %v", err)
	}
	if _, err := s.SessionByHash(t.Context(), auth.Hash("unknown")); !errors.Is(err, auth.ErrSessionNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
}

// revokeEndsSessions: revoking a token ends its open sessions in the same
// step and leaves other tokens' sessions open.
func revokeEndsSessions(t *testing.T, s auth.Store) {
	now := time.Now()
	tok, other := newToken(t, s, "a"), newToken(t, s, "b")
	s1, s2, s3 := newSession(t, s, tok, now, time.Hour), newSession(t, s, tok, now, time.Hour), newSession(t, s, other, now, time.Hour)
	if err := s.RevokeToken(t.Context(), tok.ID); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{s1.IDHash, s2.IDHash} {
		if got := session(t, s, h); got.EndedAt.IsZero() {
			t.Fatalf("session of a revoked token still open: %+v", got)
		}
	}
	if got := session(t, s, s3.IDHash); !got.EndedAt.IsZero() {
		t.Fatalf("another token's session ended: %+v", got)
	}
	if err := s.RevokeToken(t.Context(), tok.ID); !errors.Is(err, auth.ErrNotFound) {
		t.Fatalf("second revocation: %v", err)
	}
}

// expiredDeleted: the next login deletes sessions expired by its time and
// keeps the others.
func expiredDeleted(t *testing.T, s auth.Store) {
	now := time.Now()
	tok := newToken(t, s, "")
	old := newSession(t, s, tok, now.Add(-2*time.Hour), time.Hour)
	open := newSession(t, s, tok, now.Add(-2*time.Hour), 3*time.Hour)
	newSession(t, s, tok, now, time.Hour)
	if _, err := s.SessionByHash(t.Context(), old.IDHash); !errors.Is(err, auth.ErrSessionNotFound) {
		t.Fatalf("expired session after a login: %v", err)
	}
	session(t, s, open.IDHash)
}
