package postgres

import (
	"context"

	"github.com/windforce/windforce/spine"
)

// JobSetSecrets records the secrets an owned job received, fenced on its
// claim token (queries/job_set_secrets.sql) (driver.JobSecretsExecutor).
func (e *executor) JobSetSecrets(ctx context.Context, lease spine.Lease, secrets []string) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	if secrets == nil {
		secrets = []string{}
	}
	tag, err := e.q.Exec(ctx, qJobSetSecrets, namedArgs{
		"job_id": lease.JobID, "claim_token": lease.ClaimToken, "secrets": secrets,
	})
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() == 0 {
		return spine.ErrNotOwner
	}
	return nil
}
