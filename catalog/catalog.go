package catalog

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// Runtimes are the closed set of ways an entrypoint is run (DESIGN §3).
var Runtimes = []string{"bun", "node", "python", "command"}

// KnownRuntime reports whether r is one of Runtimes.
func KnownRuntime(r string) bool {
	for _, k := range Runtimes {
		if k == r {
			return true
		}
	}
	return false
}

// Typed errors of the catalog seam.
var (
	// ErrNotFound means the source, app or action does not exist in that
	// workspace. Enqueue returns it (wrapped) and writes no row.
	// It matches spine.ErrNotFound too.
	ErrNotFound = spine.NotFound("not found in catalog")
	// ErrConflict means a sync would take an app key that another source
	// of the workspace already provides.
	ErrConflict = errors.New("catalog conflict")
)

// Source is a git source of a workspace. Credentials are not stored here:
// git finds them in the server's own configuration (credential helper, ssh
// agent or keys, GIT_* environment), so they never reach the database, the
// API or a worker.
type Source struct {
	Workspace string
	ID        string
	URL       string
	Branch    string
	// Commit is the commit the catalog currently holds for this source
	// ("" before the first good sync).
	Commit   string
	SyncedAt *time.Time
	// Error is the reason the last sync failed, "" after a good one.
	Error     string
	ErrorAt   *time.Time
	CreatedAt time.Time
	// HookSecret is what git hosts sign the source's push hook with ("":
	// none, only a bearer token may call it). It is kept as text because
	// the server recomputes the hosts' HMACs, and is never shown: views say
	// only whether it is set. A put with "" keeps the stored one.
	HookSecret string
}

// App is one app of the catalog: where its code is and its defaults.
type App struct {
	Workspace  string
	Key        string
	SourceID   string
	CommitSHA  string
	Entrypoint string
	Runtime    string
	Timeout    time.Duration
	Tag        string
	Retry      spine.RetryPolicy
	// Limits are the app's resource limits (manifest limits:); a zero
	// field is not set and leaves the worker's default (DESIGN §6).
	Limits spine.Limits
	// Env is the app's environment (manifest env:), sorted by name, nil
	// when empty: literals and references to workspace secrets.
	Env []spine.EnvVar
	// Warm is the app's warm-runtime policy (manifest warm:), nil for
	// cold.
	Warm      *spine.Warm
	UpdatedAt time.Time
	// Actions, sorted by key.
	Actions []Action
}

// AppCommit is where an app of the catalog is now: the source that
// provides it and the commit new jobs of it pin. A worker compares it with
// the pins of its warm processes (Store.AppCommits).
type AppCommit struct {
	AppKey    string
	SourceID  string
	CommitSHA string
}

// Action is one action of an app. Zero Timeout, empty Tag and nil Retry
// mean "the app's value"; so does each zero field of Limits, which
// overrides the app's limits field by field. Env is merged over the app's
// per name; Warm replaces the app's when set (see Pin).
type Action struct {
	Key          string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Timeout      time.Duration
	Tag          string
	Retry        *spine.RetryPolicy
	Limits       spine.Limits
	// Env are the action's own variables, sorted by name, nil when none;
	// each replaces the app's variable of its name.
	Env []spine.EnvVar
	// Warm is nil for the app's policy, Cold() (`warm: false`) for a cold
	// action of a warm app, or the action's own policy.
	Warm *spine.Warm
}

// Cold is an action's `warm: false` (a zero Warm, which serves no job):
// its jobs run cold whatever its app says. Only an action's Warm takes
// it; Pin turns it into a nil Warm.
func Cold() *spine.Warm { return &spine.Warm{} }

// IsCold reports whether w is an action's `warm: false` (a Warm that
// serves no job), as opposed to nil ("the app's").
func IsCold(w *spine.Warm) bool {
	return w != nil && w.MaxJobs == 0
}

// SyncParams replaces the catalog entries of one source with the apps of
// one commit, in one transaction: apps and actions no longer in the
// manifest are removed, the source records Commit and clears its error.
type SyncParams struct {
	Workspace string
	SourceID  string
	Commit    string
	Apps      []App
	Now       time.Time
}

// EnqueueRequest is a trigger's request to run an action. The catalog
// fills the pin; the rest passes through to the spine.
type EnqueueRequest struct {
	ID          uuid.UUID
	Workspace   string
	App         string
	Action      string
	TriggerKind spine.TriggerKind
	TriggerRef  string
	CreatedBy   string
	Input       json.RawMessage
	Priority    int
	// ScheduledFor: zero means now.
	ScheduledFor time.Time
	CoalesceKey  string
	// Now: zero means the store's clock.
	Now time.Time
	// Unsynced: see spine.EnqueueParams.Unsynced.
	Unsynced bool
}
