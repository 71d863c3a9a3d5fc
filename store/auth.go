package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/store/driver"
)

var _ auth.Store = (*Store)(nil)

// CreateToken stores t (its hash, never its text). An id NewToken could
// not have drawn is auth.ErrInvalidID, so no stored token passes for the
// bootstrap admin.
func (s *Store) CreateToken(ctx context.Context, t auth.Token) error {
	if err := auth.CheckID(t.ID); err != nil {
		return fmt.Errorf("create token: %w", err)
	}
	if err := s.ex.AuthCreateToken(ctx, t); err != nil {
		return fmt.Errorf("create token %s: %w", t.ID, err)
	}
	return nil
}

// TokenByHash returns the live token with that hash; auth.ErrNotFound
// for an unknown or revoked one.
func (s *Store) TokenByHash(ctx context.Context, hash string) (auth.Token, error) {
	t, ok, err := s.ex.AuthTokenByHash(ctx, hash)
	if err != nil {
		return auth.Token{}, fmt.Errorf("look up token: %w", err)
	}
	if !ok {
		return auth.Token{}, auth.ErrNotFound
	}
	return t, nil
}

// TokenByID returns the token with that id, revoked or not (RevokedAt
// says), so a job's audit identity "token:<id>" can show the label of a
// token revoked since; auth.ErrNotFound when there is none.
func (s *Store) TokenByID(ctx context.Context, id string) (auth.Token, error) {
	t, ok, err := s.ex.AuthTokenByID(ctx, id)
	if err != nil {
		return auth.Token{}, fmt.Errorf("look up token %s: %w", id, err)
	}
	if !ok {
		return auth.Token{}, fmt.Errorf("look up token %s: %w", id, auth.ErrNotFound)
	}
	return t, nil
}

// RevokeToken refuses the token from the next request on and ends its
// console sessions in the same transaction, so no session of a revoked
// token is left open; auth.ErrNotFound when there is no live token with
// that id (revoking twice is not found the second time).
func (s *Store) RevokeToken(ctx context.Context, id string) error {
	now := time.Now()
	err := s.ex.Tx(ctx, func(ex driver.Executor) error {
		ok, err := ex.AuthRevokeToken(ctx, id, now)
		if err != nil {
			return err
		}
		if !ok {
			return auth.ErrNotFound
		}
		return ex.AuthEndSessions(ctx, id, now)
	})
	if err != nil {
		return fmt.Errorf("revoke token %s: %w", id, err)
	}
	return nil
}

// LeaseLive reports whether the job is running in workspace under
// claimToken right now: a WF_TOKEN is honored only while its claim is the
// job's live lease.
func (s *Store) LeaseLive(ctx context.Context, workspace string, jobID, claimToken uuid.UUID) (bool, error) {
	live, err := s.ex.AuthLeaseLive(ctx, workspace, jobID, claimToken)
	if err != nil {
		return false, fmt.Errorf("check lease of job %s: %w", jobID, err)
	}
	return live, nil
}
