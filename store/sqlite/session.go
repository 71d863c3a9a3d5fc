package sqlite

import (
	"context"
	"database/sql"
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

// SessionDeleteExpired deletes a batch of the sessions expired by now.
func (e *executor) SessionDeleteExpired(ctx context.Context, now time.Time) error {
	return e.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qSessionDeleteExpired, sql.Named("now", micros(now)))
		return translate(err)
	})
}

// SessionInsert inserts an open console session.
func (e *executor) SessionInsert(ctx context.Context, s auth.Session) error {
	return e.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qSessionInsert, sql.Named("id_hash", s.IDHash), sql.Named("token_hash", s.TokenHash),
			sql.Named("token_id", s.TokenID), sql.Named("now", micros(s.CreatedAt)),
			sql.Named("expires_at", micros(s.ExpiresAt)))
		return translate(err)
	})
}

// SessionByHash reads the session with that id hash, ended or not.
func (e *executor) SessionByHash(ctx context.Context, idHash string) (auth.Session, bool, error) {
	rows, err := e.read(ctx, qSessionByHash, sql.Named("id_hash", idHash))
	if err != nil {
		return auth.Session{}, false, err
	}
	return atMostOne(collect(rows, func(r *sql.Rows) (auth.Session, error) {
		var s auth.Session
		var created, expires int64
		var ended sql.NullInt64
		err := r.Scan(&s.IDHash, &s.TokenHash, &s.TokenID, &created, &expires, &ended)
		s.CreatedAt, s.ExpiresAt, s.EndedAt = fromMicros(created), fromMicros(expires), timeOrZero(ended)
		return s, err
	}))
}

// SessionEnd ends the open session with that id hash at now.
func (e *executor) SessionEnd(ctx context.Context, idHash string, now time.Time) error {
	return e.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qSessionEnd, sql.Named("id_hash", idHash), sql.Named("now", micros(now)))
		return translate(err)
	})
}
