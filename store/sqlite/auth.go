package sqlite

import (
	"context"
	"database/sql"
	"fmt"
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

var _ auth.Store = (*Driver)(nil)

// CreateToken stores an API token by its hash.
func (s *Driver) CreateToken(ctx context.Context, t auth.Token) error {
	if err := auth.CheckID(t.ID); err != nil {
		return fmt.Errorf("create token: %w", err)
	}
	err := s.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qAuthCreateToken,
			sql.Named("id", t.ID), sql.Named("token_hash", t.Hash), sql.Named("workspace", t.Workspace),
			sql.Named("scopes", auth.JoinScopes(t.Scopes)), sql.Named("label", t.Label),
			sql.Named("now", micros(resolveNow(t.CreatedAt))))
		return translate(err)
	})
	if err != nil {
		return fmt.Errorf("create token %s: %w", t.ID, err)
	}
	return nil
}

// TokenByHash returns the live token with that hash.
func (s *Driver) TokenByHash(ctx context.Context, hash string) (auth.Token, error) {
	rows, err := s.readerQuery(ctx, qAuthTokenByHash, sql.Named("token_hash", hash))
	if err != nil {
		return auth.Token{}, fmt.Errorf("look up token: %w", err)
	}
	toks, err := collect(rows, func(r *sql.Rows) (auth.Token, error) {
		var t auth.Token
		var scopes string
		var created int64
		err := r.Scan(&t.ID, &t.Workspace, &scopes, &t.Label, &created)
		t.Hash, t.Scopes, t.CreatedAt = hash, auth.SplitScopes(scopes), fromMicros(created)
		return t, err
	})
	if err != nil {
		return auth.Token{}, fmt.Errorf("look up token: %w", err)
	}
	if len(toks) == 0 {
		return auth.Token{}, auth.ErrNotFound
	}
	return toks[0], nil
}

// TokenByID returns the token with that id, revoked or not.
func (s *Driver) TokenByID(ctx context.Context, id string) (auth.Token, error) {
	rows, err := s.readerQuery(ctx, qAuthTokenByID, sql.Named("id", id))
	if err != nil {
		return auth.Token{}, fmt.Errorf("look up token %s: %w", id, err)
	}
	toks, err := collect(rows, func(r *sql.Rows) (auth.Token, error) {
		var t auth.Token
		var scopes string
		var created int64
		var revoked sql.NullInt64
		err := r.Scan(&t.ID, &t.Hash, &t.Workspace, &scopes, &t.Label, &created, &revoked)
		t.Scopes, t.CreatedAt, t.RevokedAt = auth.SplitScopes(scopes), fromMicros(created), timeOrZero(revoked)
		return t, err
	})
	if err != nil {
		return auth.Token{}, fmt.Errorf("look up token %s: %w", id, err)
	}
	if len(toks) == 0 {
		return auth.Token{}, fmt.Errorf("look up token %s: %w", id, auth.ErrNotFound)
	}
	return toks[0], nil
}

// RevokeToken marks a token revoked and ends its console sessions in the
// same transaction; the next request with it is refused.
func (s *Driver) RevokeToken(ctx context.Context, id string) error {
	var n int64
	now := sql.Named("now", micros(time.Now()))
	err := s.write(ctx, func(w *writeTx) error {
		res, err := w.exec(ctx, qAuthRevokeToken, sql.Named("id", id), now)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		_, err = w.exec(ctx, qAuthEndSessions, sql.Named("id", id), now)
		return err
	})
	if err != nil {
		return fmt.Errorf("revoke token %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("revoke token %s: %w", id, auth.ErrNotFound)
	}
	return nil
}

// LeaseLive reports whether the job runs under claimToken right now.
func (s *Driver) LeaseLive(ctx context.Context, workspace string, jobID, claimToken uuid.UUID) (bool, error) {
	rows, err := s.readerQuery(ctx, qAuthLeaseLive, sql.Named("id", jobID), sql.Named("workspace", workspace),
		sql.Named("token", claimToken))
	if err != nil {
		return false, fmt.Errorf("check lease of job %s: %w", jobID, err)
	}
	live, err := collect(rows, func(r *sql.Rows) (bool, error) {
		var b bool
		return b, r.Scan(&b)
	})
	if err != nil {
		return false, fmt.Errorf("check lease of job %s: %w", jobID, err)
	}
	return len(live) == 1 && live[0], nil
}
