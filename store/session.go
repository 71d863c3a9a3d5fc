package store

import (
	"context"
	"fmt"
	"time"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/store/driver"
)

// CreateSession stores sess and, in the same transaction, deletes the
// sessions expired by sess.CreatedAt: the login is the clean-up, so the
// table stays small without a sweeper of its own.
func (s *Store) CreateSession(ctx context.Context, sess auth.Session) error {
	err := s.ex.Tx(ctx, func(ex driver.Executor) error {
		if err := ex.SessionDeleteExpired(ctx, sess.CreatedAt); err != nil {
			return fmt.Errorf("delete expired sessions: %w", err)
		}
		return ex.SessionInsert(ctx, sess)
	})
	if err != nil {
		return fmt.Errorf("create session of token %s: %w", sess.TokenID, err)
	}
	return nil
}

// SessionByHash returns the session with that id hash, ended or not (the
// caller checks Live); auth.ErrSessionNotFound when there is none.
func (s *Store) SessionByHash(ctx context.Context, idHash string) (auth.Session, error) {
	sess, ok, err := s.ex.SessionByHash(ctx, idHash)
	if err != nil {
		return auth.Session{}, fmt.Errorf("look up session: %w", err)
	}
	if !ok {
		return auth.Session{}, auth.ErrSessionNotFound
	}
	return sess, nil
}

// EndSession marks the session ended at now, so no copy of its cookie is
// accepted again. Ending an ended or unknown session does nothing.
func (s *Store) EndSession(ctx context.Context, idHash string, now time.Time) error {
	if err := s.ex.SessionEnd(ctx, idHash, now); err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}
