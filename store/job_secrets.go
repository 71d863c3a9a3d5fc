package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
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

// checkSecretsExist refuses p when its pinned env names a secret its
// workspace does not have (*catalog.MissingSecretError, naming every one):
// the enqueue writes no job. It reads only when the env names secrets, in
// the enqueue's own transaction (ex). A secret deleted after this check
// fails the job at claim instead (runner.ResolveEnv).
func checkSecretsExist(ctx context.Context, ex driver.Executor, p spine.EnqueueParams) error {
	names := spine.SecretNames(p.Pin.Env)
	if len(names) == 0 {
		return nil
	}
	found, err := ex.SecretsSealed(ctx, p.Workspace, names)
	if err != nil {
		return fmt.Errorf("check the secrets the job's env names: %w", err)
	}
	have := make(map[string]bool, len(found))
	for _, s := range found {
		have[s.Name] = true
	}
	missing := slices.DeleteFunc(names, func(n string) bool { return have[n] })
	if len(missing) > 0 {
		return &catalog.MissingSecretError{Workspace: p.Workspace, Names: missing}
	}
	return nil
}
