package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/windforce/windforce/auth"
)

// The console session queries (queries/session_*.sql).
const (
	qSessionDeleteExpired query = "session_delete_expired"
	qSessionInsert        query = "session_insert"
	qSessionByHash        query = "session_by_hash"
	qSessionEnd           query = "session_end"
)

// CreateSession stores a console session and deletes expired ones, in
// one transaction.
func (s *Driver) CreateSession(ctx context.Context, sess auth.Session) error {
	now := sql.Named("now", micros(sess.CreatedAt))
	err := s.write(ctx, func(w *writeTx) error {
		if _, err := w.exec(ctx, qSessionDeleteExpired, now); err != nil {
			return fmt.Errorf("delete expired sessions: %w", translate(err))
		}
		_, err := w.exec(ctx, qSessionInsert, sql.Named("id_hash", sess.IDHash), sql.Named("token_hash", sess.TokenHash),
			sql.Named("token_id", sess.TokenID), now, sql.Named("expires_at", micros(sess.ExpiresAt)))
		return translate(err)
	})
	if err != nil {
		return fmt.Errorf("create session of token %s: %w", sess.TokenID, err)
	}
	return nil
}

// SessionByHash returns the session with that id hash, ended or not.
func (s *Driver) SessionByHash(ctx context.Context, idHash string) (auth.Session, error) {
	rows, err := s.readerQuery(ctx, qSessionByHash, sql.Named("id_hash", idHash))
	if err != nil {
		return auth.Session{}, fmt.Errorf("look up session: %w", err)
	}
	out, err := collect(rows, func(r *sql.Rows) (auth.Session, error) {
		var sess auth.Session
		var created, expires int64
		var ended sql.NullInt64
		err := r.Scan(&sess.IDHash, &sess.TokenHash, &sess.TokenID, &created, &expires, &ended)
		sess.CreatedAt, sess.ExpiresAt, sess.EndedAt = fromMicros(created), fromMicros(expires), timeOrZero(ended)
		return sess, err
	})
	if err != nil {
		return auth.Session{}, fmt.Errorf("look up session: %w", err)
	}
	if len(out) == 0 {
		return auth.Session{}, auth.ErrSessionNotFound
	}
	return out[0], nil
}

// EndSession marks a session ended at now (logout).
func (s *Driver) EndSession(ctx context.Context, idHash string, now time.Time) error {
	err := s.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qSessionEnd, sql.Named("id_hash", idHash), sql.Named("now", micros(now)))
		return translate(err)
	})
	if err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}
