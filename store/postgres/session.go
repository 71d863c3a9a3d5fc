package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/auth"
)

// The console session queries (queries/session_*.sql).
var (
	qSessionDeleteExpired = mustQuery("session_delete_expired")
	qSessionInsert        = mustQuery("session_insert")
	qSessionByHash        = mustQuery("session_by_hash")
	qSessionEnd           = mustQuery("session_end")
)

// SessionDeleteExpired deletes a batch of the sessions expired by now.
func (e *executor) SessionDeleteExpired(ctx context.Context, now time.Time) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	_, err := e.q.Exec(ctx, qSessionDeleteExpired, namedArgs{"now": now})
	return translate(err)
}

// SessionInsert inserts an open console session.
func (e *executor) SessionInsert(ctx context.Context, s auth.Session) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	_, err := e.q.Exec(ctx, qSessionInsert, namedArgs{
		"id_hash": s.IDHash, "token_hash": s.TokenHash, "token_id": s.TokenID,
		"now": s.CreatedAt, "expires_at": s.ExpiresAt,
	})
	return translate(err)
}

// SessionByHash reads the session with that id hash, ended or not.
func (e *executor) SessionByHash(ctx context.Context, idHash string) (auth.Session, bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qSessionByHash, namedArgs{"id_hash": idHash})
	if err != nil {
		return auth.Session{}, false, err
	}
	s, err := pgx.CollectExactlyOneRow(rows, func(r pgx.CollectableRow) (auth.Session, error) {
		var s auth.Session
		var ended *time.Time
		err := r.Scan(&s.IDHash, &s.TokenHash, &s.TokenID, &s.CreatedAt, &s.ExpiresAt, &ended)
		if ended != nil {
			s.EndedAt = *ended
		}
		return s, err
	})
	return authRow(s, err)
}

// SessionEnd ends the open session with that id hash at now.
func (e *executor) SessionEnd(ctx context.Context, idHash string, now time.Time) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	_, err := e.q.Exec(ctx, qSessionEnd, namedArgs{"id_hash": idHash, "now": now})
	return translate(err)
}
