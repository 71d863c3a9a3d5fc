package auth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/windforce/windforce/spine"
)

// ErrSessionNotFound means no console session has that id. It matches
// spine.ErrNotFound too.
var ErrSessionNotFound = spine.NotFound("session not found")

// Session is a console login kept server-side (console_session): the
// cookie carries only its random id, signed, and every console request
// reads the row again, so logout and revocation end it for every copy of
// the cookie. The row holds hashes only, as api_token does.
type Session struct {
	// IDHash is the hex SHA-256 of the session id the cookie carries.
	IDHash string
	// TokenHash is the hash of the token the user logged in with; each
	// request looks it up again (a revoked token fails there too).
	TokenHash string
	// TokenID is that token's id (AdminID for the bootstrap admin token):
	// RevokeToken ends the sessions of this id.
	TokenID   string
	CreatedAt time.Time
	ExpiresAt time.Time
	// EndedAt is when logout or revocation ended the session; zero while
	// it is open.
	EndedAt time.Time
}

// Live reports whether s still lets its cookie in at now: not ended and
// not expired.
func (s Session) Live(now time.Time) bool {
	return s.EndedAt.IsZero() && now.Before(s.ExpiresAt)
}

// NewSessionID draws a fresh session id: the text for the cookie and the
// hash the store keeps.
func NewSessionID() (text, hash string, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", fmt.Errorf("new session id: %w", err)
	}
	text = hex.EncodeToString(b[:])
	return text, Hash(text), nil
}

// SessionStore keeps console sessions. The store core (package store)
// implements it as part of Store.
type SessionStore interface {
	// CreateSession stores s and deletes the sessions expired by
	// s.CreatedAt (the login is the clean-up, so the table stays small
	// without a sweeper of its own).
	CreateSession(ctx context.Context, s Session) error
	// SessionByHash returns the session with that id hash, ended or not
	// (the caller checks Live); ErrSessionNotFound when there is none.
	SessionByHash(ctx context.Context, idHash string) (Session, error)
	// EndSession marks the session ended at now, so no copy of its cookie
	// is accepted again. Ending an ended or unknown session does nothing.
	EndSession(ctx context.Context, idHash string, now time.Time) error
}
