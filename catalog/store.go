package catalog

import (
	"context"

	"github.com/windforce/windforce/spine"
)

// Store is the catalog on one database. The store core (package store)
// implements it beside spine.Store, on the same database, so Enqueue can
// resolve the catalog and insert the job in one transaction.
type Store interface {
	// PutSource creates a source or updates its URL and branch; its sync
	// state (commit, error) is kept, and so is its hook secret when
	// s.HookSecret is "".
	PutSource(ctx context.Context, s Source) error
	// SetHookSecret sets, rotates or ("") clears the secret git hosts sign
	// the source's push hook with; ErrNotFound when there is no such
	// source. The old secret stops working the moment this commits.
	SetHookSecret(ctx context.Context, workspace, id, secret string) error
	// GetSource returns one source; ErrNotFound when it does not exist.
	GetSource(ctx context.Context, workspace, id string) (Source, error)
	// ListSources returns the sources of a workspace, or of every workspace
	// when workspace is "", ordered by workspace and id.
	ListSources(ctx context.Context, workspace string) ([]Source, error)
	// RecordSyncError records why the last sync of a source failed. The
	// catalog itself is left as it was. In the same transaction it writes
	// the source.sync_failed event (DESIGN §9) unless the source already
	// showed this error.
	RecordSyncError(ctx context.Context, workspace, id, message string) error

	// ApplySync replaces the source's apps and actions with p.Apps in one
	// transaction (removed ones are deleted) and records p.Commit as the
	// source's commit. It refuses, with ErrConflict and no change, an app
	// key another source of the workspace already provides. Call it only
	// once the commit's tree is complete in the object cache. In the same
	// transaction it writes the source.synced event (DESIGN §9) unless
	// the source already held p.Commit without an error.
	ApplySync(ctx context.Context, p SyncParams) error
	// LockSource serializes syncs of one source across servers (a Postgres
	// advisory lock; SQLite has one process per file and returns at once).
	// The returned function releases it.
	LockSource(ctx context.Context, workspace, id string) (unlock func(), err error)

	// ListApps returns the apps of a workspace with their actions, by key.
	ListApps(ctx context.Context, workspace string) ([]App, error)
	// GetApp returns one app with its actions; ErrNotFound when missing.
	GetApp(ctx context.Context, workspace, key string) (App, error)
	// AppCommits returns every app of a workspace with its source and
	// commit, by key: the narrow read a worker repeats every few seconds
	// to drain the warm processes of commits no longer in the catalog.
	AppCommits(ctx context.Context, workspace string) ([]AppCommit, error)

	// EnqueueAction is the one enqueue path (DESIGN §2 invariant 1): in one
	// transaction it resolves (workspace, app, action), validates the
	// input against the action's input schema (*InputError), pins the
	// app's and action's values into the job (Resolve) and inserts it
	// through the spine's insert. Unknown app or action: ErrNotFound.
	// Either error writes no row.
	EnqueueAction(ctx context.Context, r EnqueueRequest) (spine.EnqueueResult, error)
}
