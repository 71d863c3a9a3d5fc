package source

import (
	"errors"
	"fmt"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/source/manifest"
)

// Step names the stage of a sync that failed.
type Step string

// The steps of a sync, in their fixed order.
const (
	StepFetch    Step = "fetch"
	StepValidate Step = "validate"
	StepCache    Step = "cache"
	StepCatalog  Step = "catalog"
)

// SyncError is a failed sync: which source, at which step, at which commit
// ("" before the fetch gave one), and why. The catalog is unchanged.
type SyncError struct {
	Workspace string
	Source    string
	Step      Step
	Commit    string
	Err       error
}

// Error reads "sync ws/src: validate (commit abc123): invalid manifest: …".
func (e *SyncError) Error() string {
	at := ""
	if e.Commit != "" {
		at = fmt.Sprintf(" (commit %.12s)", e.Commit)
	}
	return fmt.Sprintf("sync %s/%s: %s%s: %v", e.Workspace, e.Source, e.Step, at, e.Err)
}

// Message is what the source shows as its error: the step and the reason.
func (e *SyncError) Message() string {
	at := ""
	if e.Commit != "" {
		at = fmt.Sprintf(" at commit %.12s", e.Commit)
	}
	return fmt.Sprintf("%s failed%s: %v", e.Step, at, e.Err)
}

// Unwrap returns the cause.
func (e *SyncError) Unwrap() error { return e.Err }

// UserError reports whether the source's content is at fault (a bad
// manifest, a missing schema, an app another source owns): the API answers
// 422, where a fetch or a database failure is the server's problem.
func (e *SyncError) UserError() bool {
	return errors.Is(e.Err, manifest.ErrInvalid) || errors.Is(e.Err, catalog.ErrConflict)
}
