package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// The schema itself refuses impossible states (invariant 9), whatever code
// writes them.
func TestSchemaRefusesImpossibleQueueRows(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	cases := map[string]string{
		"running without claim token": `INSERT INTO job_queue (job_id, workspace, app_key, action_key, tag, scheduled_for, running, started_at, worker)
			VALUES (gen_random_uuid(), 'ws', 'a', 'b', 't', now(), true, now(), 'w')`,
		"waiting with an owner": `INSERT INTO job_queue (job_id, workspace, app_key, action_key, tag, scheduled_for, worker)
			VALUES (gen_random_uuid(), 'ws', 'a', 'b', 't', now(), 'w')`,
		"cancel mark on a waiting job": `INSERT INTO job_queue (job_id, workspace, app_key, action_key, tag, scheduled_for, canceled_by)
			VALUES (gen_random_uuid(), 'ws', 'a', 'b', 't', now(), 'op')`,
		"unknown status": `INSERT INTO job_completed (job_id, workspace, tag, status, completed_at, attempt, restarts)
			VALUES (gen_random_uuid(), 'ws', 't', 'done', now(), 1, 0)`,
		"failure without error": `INSERT INTO job_completed (job_id, workspace, tag, status, completed_at, attempt, restarts)
			VALUES (gen_random_uuid(), 'ws', 't', 'failure', now(), 1, 0)`,
	}
	for name, sql := range cases {
		_, err := s.pool.Exec(ctx, sql)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23514" {
			t.Errorf("%s: got %v, want a check violation", name, err)
		}
	}
}
