package driver

import (
	"context"

	"github.com/windforce/windforce/spine"
)

// JobSecretsExecutor records which workspace secrets a job received when
// its worker resolved its env at claim (DESIGN §8), for the job view.
type JobSecretsExecutor interface {
	// JobSetSecrets sets the secrets ("name@version") of the job lease
	// holds, fenced on its claim token (queries/job_set_secrets.sql):
	// spine.ErrNotOwner, and nothing written, when the lease is lost.
	JobSetSecrets(ctx context.Context, lease spine.Lease, secrets []string) error
}
