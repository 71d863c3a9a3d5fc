package postgres

import (
	"context"
	"errors"
	"fmt"
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
	qAuthLeaseLive   = mustQuery("auth_lease_live")
)

var _ auth.Store = (*Driver)(nil)

// CreateToken stores an API token by its hash.
func (s *Driver) CreateToken(ctx context.Context, t auth.Token) error {
	if err := auth.CheckID(t.ID); err != nil {
		return fmt.Errorf("create token: %w", err)
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	_, err := s.pool.Exec(ctx, qAuthCreateToken, pgx.StrictNamedArgs{
		"id": t.ID, "token_hash": t.Hash, "workspace": t.Workspace,
		"scopes": auth.JoinScopes(t.Scopes), "label": t.Label, "now": timeArg(t.CreatedAt),
	})
	if err != nil {
		return fmt.Errorf("create token %s: %w", t.ID, translate(err))
	}
	return nil
}

// TokenByHash returns the live token with that hash.
func (s *Driver) TokenByHash(ctx context.Context, hash string) (auth.Token, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, qAuthTokenByHash, pgx.StrictNamedArgs{"token_hash": hash})
	if err != nil {
		return auth.Token{}, fmt.Errorf("look up token: %w", err)
	}
	t, err := pgx.CollectExactlyOneRow(rows, func(r pgx.CollectableRow) (auth.Token, error) {
		var t auth.Token
		var scopes string
		err := r.Scan(&t.ID, &t.Workspace, &scopes, &t.Label, &t.CreatedAt)
		t.Hash, t.Scopes = hash, auth.SplitScopes(scopes)
		return t, err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return auth.Token{}, auth.ErrNotFound
	}
	if err != nil {
		return auth.Token{}, fmt.Errorf("look up token: %w", err)
	}
	return t, nil
}

// TokenByID returns the token with that id, revoked or not.
func (s *Driver) TokenByID(ctx context.Context, id string) (auth.Token, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, qAuthTokenByID, pgx.StrictNamedArgs{"id": id})
	if err != nil {
		return auth.Token{}, fmt.Errorf("look up token %s: %w", id, err)
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
	if errors.Is(err, pgx.ErrNoRows) {
		return auth.Token{}, fmt.Errorf("look up token %s: %w", id, auth.ErrNotFound)
	}
	if err != nil {
		return auth.Token{}, fmt.Errorf("look up token %s: %w", id, err)
	}
	return t, nil
}

// RevokeToken marks a token revoked and ends its console sessions in one
// statement; the next request with it is refused.
func (s *Driver) RevokeToken(ctx context.Context, id string) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	var n int64
	err := s.pool.QueryRow(ctx, qAuthRevokeToken, pgx.StrictNamedArgs{"id": id, "now": time.Now()}).Scan(&n)
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
	ctx, cancel := s.op(ctx)
	defer cancel()
	var live bool
	err := s.pool.QueryRow(ctx, qAuthLeaseLive, pgx.StrictNamedArgs{"id": jobID, "workspace": workspace, "token": claimToken}).Scan(&live)
	if err != nil {
		return false, fmt.Errorf("check lease of job %s: %w", jobID, err)
	}
	return live, nil
}
