package spine

import "errors"

// Typed errors returned at the store seam. Stores translate driver errors
// into these so callers (worker, HTTP API) can decide without knowing the
// database.
var (
	// ErrNotFound means the job (in that workspace) does not exist.
	ErrNotFound = errors.New("job not found")
	// ErrNotOwner means the caller's claim token no longer matches: another
	// worker owns the job now, or it was reaped, released or finished. The
	// caller must stop working on the job and write nothing.
	ErrNotOwner = errors.New("claim token does not match: job is not owned by this worker")
	// ErrConflict means the operation does not apply to the job's current
	// state: canceling a finished job, reopening a successful one.
	ErrConflict = errors.New("job state conflict")
	// ErrInvalid means the request itself is malformed (empty workspace,
	// input that is not JSON, a negative limit).
	ErrInvalid = errors.New("invalid request")
	// ErrStalePin means an enqueue with AtCommit found its app at another
	// commit (or gone): the caller resolves the pin again.
	ErrStalePin = errors.New("the app is no longer at the commit the job was pinned to")
)

// NotFound returns the "not found" error of one kind of thing (a source,
// an app, a token, a schedule), with its own text. It matches ErrNotFound
// as well as itself, so a caller that only needs "is it missing?" (the
// API's 404, the console's page) asks one question whatever the kind.
func NotFound(text string) error { return notFound{text} }

type notFound struct{ text string }

func (e notFound) Error() string        { return e.text }
func (e notFound) Is(target error) bool { return target == ErrNotFound }
