package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/auth"
)

// The API token queries (queries/auth_*.sql).
var (
	qAuthCreateToken = mustQuery("auth_create_token")
	qAuthTokenByHash = mustQuery("auth_token_by_hash")
	qAuthTokenByID   = mustQuery("auth_token_by_id")
	qAuthRevokeToken = mustQuery("auth_revoke_token")
	qAuthEndSessions = mustQuery("auth_end_sessions")
	qAuthLeaseLive   = mustQuery("auth_lease_live")
)

// AuthCreateToken inserts a token row by its hash.
func (e *executor) AuthCreateToken(ctx context.Context, t auth.Token) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	_, err := e.q.Exec(ctx, qAuthCreateToken, namedArgs{
		"id": t.ID, "token_hash": t.Hash, "workspace": t.Workspace,
		"scopes": auth.JoinScopes(t.Scopes), "label": t.Label, "now": timeArg(t.CreatedAt),
	})
	return translate(err)
}

// AuthTokenByHash reads the live token with that hash.
func (e *executor) AuthTokenByHash(ctx context.Context, hash string) (auth.Token, bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qAuthTokenByHash, namedArgs{"token_hash": hash})
	if err != nil {
		return auth.Token{}, false, err
	}
	t, err := pgx.CollectExactlyOneRow(rows, func(r pgx.CollectableRow) (auth.Token, error) {
		var t auth.Token
		var scopes string
		err := r.Scan(&t.ID, &t.Workspace, &scopes, &t.Label, &t.CreatedAt)
		t.Hash, t.Scopes = hash, auth.SplitScopes(scopes)
		return t, err
	})
	return authRow(t, err)
}

// AuthTokenByID reads the token with that id, revoked or not.
func (e *executor) AuthTokenByID(ctx context.Context, id string) (auth.Token, bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qAuthTokenByID, namedArgs{"id": id})
	if err != nil {
		return auth.Token{}, false, err
	}
	t, err := pgx.CollectExactlyOneRow(rows, func(r pgx.CollectableRow) (auth.Token, error) {
		var t auth.Token
		var scopes string
		var revoked *time.Time
		err := r.Scan(&t.ID, &t.Hash, &t.Workspace, &scopes, &t.Label, &t.CreatedAt, &revoked)
		t.Scopes = auth.SplitScopes(scopes)
		if revoked != nil {
			t.RevokedAt = *revoked
		}
		return t, err
	})
	return authRow(t, err)
}

// AuthRevokeToken marks the live token id revoked at now.
func (e *executor) AuthRevokeToken(ctx context.Context, id string, now time.Time) (bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	tag, err := e.q.Exec(ctx, qAuthRevokeToken, namedArgs{"id": id, "now": timeArg(now)})
	if err != nil {
		return false, translate(err)
	}
	return tag.RowsAffected() > 0, nil
}

// AuthEndSessions ends the open console sessions of token id at now.
func (e *executor) AuthEndSessions(ctx context.Context, id string, now time.Time) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	_, err := e.q.Exec(ctx, qAuthEndSessions, namedArgs{"id": id, "now": timeArg(now)})
	return translate(err)
}

// AuthLeaseLive reports whether the job runs under claimToken right now.
func (e *executor) AuthLeaseLive(ctx context.Context, workspace string, jobID, claimToken uuid.UUID) (bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	var live bool
	err := e.q.QueryRow(ctx, qAuthLeaseLive, namedArgs{"id": jobID, "workspace": workspace, "token": claimToken}).Scan(&live)
	return live, err
}

// authRow is the answer of a lookup of at most one row (a token, a
// session): ok false for none.
func authRow[T any](v T, err error) (T, bool, error) {
	var zero T
	if errors.Is(err, pgx.ErrNoRows) {
		return zero, false, nil
	}
	if err != nil {
		return zero, false, err
	}
	return v, true, nil
}
