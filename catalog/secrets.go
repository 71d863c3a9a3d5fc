package catalog

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrMissingSecret means a job's env names a workspace secret that does
// not exist; a *MissingSecretError matches it.
var ErrMissingSecret = errors.New("missing secret")

// MissingSecretError is an enqueue refused because the job's env (the
// manifest's `env:` of its app and action, as resolved) names secrets its
// workspace does not have (DESIGN §8). The API answers 422 with code
// missing_secret naming them; no job is written.
type MissingSecretError struct {
	Workspace string
	// Names are the missing secrets, sorted, once each.
	Names []string
}

// Error names the missing secrets and the workspace.
func (e *MissingSecretError) Error() string {
	quoted := make([]string, len(e.Names))
	for i, n := range e.Names {
		quoted[i] = strconv.Quote(n)
	}
	if len(quoted) == 1 {
		return fmt.Sprintf("the job's env names secret %s, which workspace %q does not have", quoted[0], e.Workspace)
	}
	return fmt.Sprintf("the job's env names secrets %s, which workspace %q does not have", strings.Join(quoted, ", "), e.Workspace)
}

// Is makes errors.Is(err, ErrMissingSecret) true.
func (e *MissingSecretError) Is(target error) bool { return target == ErrMissingSecret }
