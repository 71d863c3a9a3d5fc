package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/auth"
)

// The API token queries (queries/auth_*.sql).
const (
	qAuthCreateToken query = "auth_create_token"
	qAuthRevokeToken query = "auth_revoke_token"
	qAuthTokenByHash query = "auth_token_by_hash"
	qAuthTokenByID   query = "auth_token_by_id"
	qAuthEndSessions query = "auth_end_sessions"
	qAuthLeaseLive   query = "auth_lease_live"
)

// AuthCreateToken inserts a token row by its hash.
func (e *executor) AuthCreateToken(ctx context.Context, t auth.Token) error {
	return e.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qAuthCreateToken,
			sql.Named("id", t.ID), sql.Named("token_hash", t.Hash), sql.Named("workspace", t.Workspace),
			sql.Named("scopes", auth.JoinScopes(t.Scopes)), sql.Named("label", t.Label),
			sql.Named("now", micros(resolveNow(t.CreatedAt))))
		return translate(err)
	})
}

// AuthTokenByHash reads the live token with that hash.
func (e *executor) AuthTokenByHash(ctx context.Context, hash string) (auth.Token, bool, error) {
	rows, err := e.read(ctx, qAuthTokenByHash, sql.Named("token_hash", hash))
	if err != nil {
		return auth.Token{}, false, err
	}
	return atMostOne(collect(rows, func(r *sql.Rows) (auth.Token, error) {
		var t auth.Token
		var scopes string
		var created int64
		err := r.Scan(&t.ID, &t.Workspace, &scopes, &t.Label, &created)
		t.Hash, t.Scopes, t.CreatedAt = hash, auth.SplitScopes(scopes), fromMicros(created)
		return t, err
	}))
}

// AuthTokenByID reads the token with that id, revoked or not.
func (e *executor) AuthTokenByID(ctx context.Context, id string) (auth.Token, bool, error) {
	rows, err := e.read(ctx, qAuthTokenByID, sql.Named("id", id))
	if err != nil {
		return auth.Token{}, false, err
	}
	return atMostOne(collect(rows, func(r *sql.Rows) (auth.Token, error) {
		var t auth.Token
		var scopes string
		var created int64
		var revoked sql.NullInt64
		err := r.Scan(&t.ID, &t.Hash, &t.Workspace, &scopes, &t.Label, &created, &revoked)
		t.Scopes, t.CreatedAt, t.RevokedAt = auth.SplitScopes(scopes), fromMicros(created), timeOrZero(revoked)
		return t, err
	}))
}

// AuthRevokeToken marks the live token id revoked at now.
func (e *executor) AuthRevokeToken(ctx context.Context, id string, now time.Time) (bool, error) {
	var n int64
	err := e.write(ctx, func(w *writeTx) error {
		res, err := w.exec(ctx, qAuthRevokeToken, sql.Named("id", id), sql.Named("now", micros(resolveNow(now))))
		if err != nil {
			return translate(err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n > 0, err
}

// AuthEndSessions ends the open console sessions of token id at now.
func (e *executor) AuthEndSessions(ctx context.Context, id string, now time.Time) error {
	return e.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qAuthEndSessions, sql.Named("id", id), sql.Named("now", micros(resolveNow(now))))
		return translate(err)
	})
}

// AuthLeaseLive reports whether the job runs under claimToken right now.
func (e *executor) AuthLeaseLive(ctx context.Context, workspace string, jobID, claimToken uuid.UUID) (bool, error) {
	rows, err := e.read(ctx, qAuthLeaseLive, sql.Named("id", jobID), sql.Named("workspace", workspace),
		sql.Named("token", claimToken))
	if err != nil {
		return false, err
	}
	live, ok, err := atMostOne(collect(rows, func(r *sql.Rows) (bool, error) {
		var b bool
		return b, r.Scan(&b)
	}))
	return ok && live, err
}

// atMostOne is the answer of a lookup of at most one row: ok false for none.
func atMostOne[T any](rows []T, err error) (T, bool, error) {
	var zero T
	if err != nil || len(rows) == 0 {
		return zero, false, err
	}
	return rows[0], true, nil
}
