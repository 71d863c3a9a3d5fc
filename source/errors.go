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

// UserError reports whether the source is at fault (a bad manifest, a
// missing schema, an app another source owns, a URL the server refuses):
// the API answers 422, where a fetch or a database failure is the
// server's problem.
func (e *SyncError) UserError() bool {
	var re *RefusedError
	return errors.Is(e.Err, manifest.ErrInvalid) || errors.Is(e.Err, catalog.ErrConflict) || errors.As(e.Err, &re)
}

// ErrPushRejected marks a deploy whose push the remote refused: the branch
// moved between clone and push, or the remote's rules forbid it. Nothing
// was forced and the catalog is as it was; the *GitError in the chain
// holds git's words.
var ErrPushRejected = errors.New("push rejected")

// ErrCredentialsInURL marks a source URL refused because it would carry
// credentials (an https user part, a password, a query or a fragment).
var ErrCredentialsInURL = errors.New("credentials in the source URL")

// ErrFileSourceNotAllowed marks a file:// source outside the folders the
// server allows (Syncer.FileSources, WINDFORCE_FILE_SOURCES).
var ErrFileSourceNotAllowed = errors.New("file source not allowed")

// RefusedError is a source refused before git runs with it: a bad id,
// URL form or branch, credentials in the URL (ErrCredentialsInURL), or a
// local repository outside the allowed folders (ErrFileSourceNotAllowed).
// Nothing was stored, fetched or pushed. Its text never holds credentials.
type RefusedError struct {
	// URL is the source's URL, redacted; "" when the URL is not at fault.
	URL string
	// Reason says what is wrong and what to do instead.
	Reason string
	// Err is ErrCredentialsInURL, ErrFileSourceNotAllowed or nil.
	Err error
}

// Error reads "source URL https://***@host/r.git: credentials in …".
func (e *RefusedError) Error() string {
	if e.URL == "" {
		return e.Reason
	}
	return fmt.Sprintf("source URL %s: %s", e.URL, e.Reason)
}

// Unwrap returns the kind of refusal, if any.
func (e *RefusedError) Unwrap() error { return e.Err }
