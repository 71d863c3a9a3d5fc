package driver

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/auth"
)

// AuthExecutor keeps tokens, console sessions, leases and webhook secrets.
// Its lookups answer ok false for a missing row: which error that is
// (auth.ErrNotFound, auth.ErrSessionNotFound, catalog.ErrNotFound) is the
// core's rule, written once.
type AuthExecutor interface {
	// AuthCreateToken inserts the token row t: its hash, never its text.
	// A zero CreatedAt is the database's clock. An id or hash already
	// stored is spine.ErrConflict.
	AuthCreateToken(ctx context.Context, t auth.Token) error
	// AuthTokenByHash reads the live (not revoked) token with that hash;
	// ok is false when there is none.
	AuthTokenByHash(ctx context.Context, hash string) (t auth.Token, ok bool, err error)
	// AuthTokenByID reads the token with that id, revoked or not
	// (RevokedAt says); ok is false when there is none.
	AuthTokenByID(ctx context.Context, id string) (t auth.Token, ok bool, err error)
	// AuthRevokeToken marks the live token id revoked at now (zero: the
	// database's clock); ok is false when no live token has that id
	// (unknown, or revoked already).
	AuthRevokeToken(ctx context.Context, id string, now time.Time) (ok bool, err error)
	// AuthEndSessions ends, at now (zero: the database's clock), the open
	// console sessions of token id; sessions ended before keep their first
	// ended_at.
	AuthEndSessions(ctx context.Context, id string, now time.Time) error
	// AuthLeaseLive reports whether job jobID of workspace is running under
	// claimToken right now.
	AuthLeaseLive(ctx context.Context, workspace string, jobID, claimToken uuid.UUID) (bool, error)

	// SessionDeleteExpired deletes a bounded batch (1000) of the console
	// sessions expired by now.
	SessionDeleteExpired(ctx context.Context, now time.Time) error
	// SessionInsert inserts the console session s (CreatedAt, ExpiresAt;
	// EndedAt is ignored, a new session is open). An id hash already
	// stored is spine.ErrConflict.
	SessionInsert(ctx context.Context, s auth.Session) error
	// SessionByHash reads the console session with that id hash, ended or
	// not; ok is false when there is none.
	SessionByHash(ctx context.Context, idHash string) (s auth.Session, ok bool, err error)
	// SessionEnd ends the open session with that id hash at now; an ended
	// or unknown session is left as it is.
	SessionEnd(ctx context.Context, idHash string, now time.Time) error

	// WebhookPutSecret creates or replaces the webhook secret of an action
	// that exists in the catalog, in one statement; ok is false when the
	// catalog has no such action (nothing is written). A zero now is the
	// database's clock.
	WebhookPutSecret(ctx context.Context, workspace, app, action, secret string, now time.Time) (ok bool, err error)
	// WebhookSecret reads the webhook secret of an action; ok is false
	// when none was created.
	WebhookSecret(ctx context.Context, workspace, app, action string) (secret string, ok bool, err error)
	// WebhookForget deletes recorded signatures seen before before (on
	// Postgres a bounded batch that skips rows a concurrent webhook is
	// deleting).
	WebhookForget(ctx context.Context, before time.Time) error
	// WebhookSeen records signature as seen at now (zero: the database's
	// clock); ok is false when it was recorded already (a replay), and
	// nothing is written. Inside a transaction, a concurrent duplicate
	// waits for the first to commit or roll back.
	WebhookSeen(ctx context.Context, signature string, now time.Time) (ok bool, err error)
}
