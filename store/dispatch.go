package store

import (
	"context"
	"fmt"

	"github.com/windforce/windforce/spine"
)

// ReadDispatched reads a job dispatched to worker under lease l, as Claim
// would have returned it (spine.Store.ReadDispatched). It writes nothing:
// the enqueue that dispatched the job wrote its ownership and first ping.
func (s *Store) ReadDispatched(ctx context.Context, worker string, l spine.Lease) (spine.ClaimedJob, error) {
	job, err := s.ex.ReadDispatched(ctx, worker, l)
	if err != nil {
		return spine.ClaimedJob{}, fmt.Errorf("read dispatched job %s: %w", l.JobID, err)
	}
	return job, nil
}

// Withdraw ends worker's offer (spine.Store.Withdraw).
func (s *Store) Withdraw(ctx context.Context, worker string) error {
	if worker == "" {
		return fmt.Errorf("withdraw offer: %w: no worker", spine.ErrInvalid)
	}
	if err := s.ex.Withdraw(ctx, worker); err != nil {
		return fmt.Errorf("withdraw offer of %s: %w", worker, err)
	}
	return nil
}

// Owned returns the leases of the running jobs worker owns
// (spine.Store.Owned).
func (s *Store) Owned(ctx context.Context, worker string) ([]spine.Lease, error) {
	if worker == "" {
		return nil, fmt.Errorf("read owned jobs: %w: no worker", spine.ErrInvalid)
	}
	leases, err := s.ex.Owned(ctx, worker)
	if err != nil {
		return nil, fmt.Errorf("read the jobs %s owns: %w", worker, err)
	}
	return leases, nil
}
