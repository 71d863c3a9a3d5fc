package store

import (
	"context"
	"fmt"

	"github.com/windforce/windforce/spine"
)

// SetJobSecrets records which secrets ("name@version") the job lease holds
// received at claim, for the job view (DESIGN §8); each attempt writes its
// own. Fenced on the claim token: spine.ErrNotOwner, and nothing written,
// once the lease is lost.
func (s *Store) SetJobSecrets(ctx context.Context, lease spine.Lease, secrets []string) error {
	if err := s.ex.JobSetSecrets(ctx, lease, secrets); err != nil {
		return fmt.Errorf("record the secrets of job %s: %w", lease.JobID, err)
	}
	return nil
}
