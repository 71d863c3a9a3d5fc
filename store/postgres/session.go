package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/auth"
)

// The console session queries (queries/session_*.sql).
var (
	qSessionCreate = mustQuery("session_create")
	qSessionByHash = mustQuery("session_by_hash")
	qSessionEnd    = mustQuery("session_end")
)

// CreateSession stores a console session and deletes expired ones.
func (s *Driver) CreateSession(ctx context.Context, sess auth.Session) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	_, err := s.pool.Exec(ctx, qSessionCreate, pgx.StrictNamedArgs{
		"id_hash": sess.IDHash, "token_hash": sess.TokenHash, "token_id": sess.TokenID,
		"now": sess.CreatedAt, "expires_at": sess.ExpiresAt,
	})
	if err != nil {
		return fmt.Errorf("create session of token %s: %w", sess.TokenID, translate(err))
	}
	return nil
}

// SessionByHash returns the session with that id hash, ended or not.
func (s *Driver) SessionByHash(ctx context.Context, idHash string) (auth.Session, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, qSessionByHash, pgx.StrictNamedArgs{"id_hash": idHash})
	if err != nil {
		return auth.Session{}, fmt.Errorf("look up session: %w", err)
	}
	sess, err := pgx.CollectExactlyOneRow(rows, func(r pgx.CollectableRow) (auth.Session, error) {
		var sess auth.Session
		var ended *time.Time
		err := r.Scan(&sess.IDHash, &sess.TokenHash, &sess.TokenID, &sess.CreatedAt, &sess.ExpiresAt, &ended)
		if ended != nil {
			sess.EndedAt = *ended
		}
		return sess, err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return auth.Session{}, auth.ErrSessionNotFound
	}
	if err != nil {
		return auth.Session{}, fmt.Errorf("look up session: %w", err)
	}
	return sess, nil
}

// EndSession marks a session ended at now (logout).
func (s *Driver) EndSession(ctx context.Context, idHash string, now time.Time) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	if _, err := s.pool.Exec(ctx, qSessionEnd, pgx.StrictNamedArgs{"id_hash": idHash, "now": now}); err != nil {
		return fmt.Errorf("end session: %w", translate(err))
	}
	return nil
}
