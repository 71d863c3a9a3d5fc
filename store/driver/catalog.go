package driver

import (
	"context"
	"time"

	"github.com/windforce/windforce/catalog"
)

// CatalogExecutor keeps sources, apps and actions. The core writes a sync
// from these operations in one transaction (lock, check owners, delete,
// insert, record the commit); an action's override columns are read and
// written with catalog.Overrides on both databases.
type CatalogExecutor interface {
	// CatalogPutSource creates a source or changes its URL and branch; its
	// sync state (commit, error) is kept, and so is its hook secret when
	// src.HookSecret is "". A zero src.CreatedAt is the database's clock.
	CatalogPutSource(ctx context.Context, src catalog.Source) error
	// CatalogGetSource reads one source; catalog.ErrNotFound when there is
	// no such source.
	CatalogGetSource(ctx context.Context, workspace, id string) (catalog.Source, error)
	// CatalogListSources reads the sources of a workspace, or of every
	// workspace when it is "", ordered by workspace and id.
	CatalogListSources(ctx context.Context, workspace string) ([]catalog.Source, error)
	// CatalogSyncError records message as the reason the source's last sync
	// failed, at now (zero: the database's clock); catalog.ErrNotFound
	// when there is no such source. Apps and actions are not touched.
	CatalogSyncError(ctx context.Context, workspace, id, message string, now time.Time) error
	// CatalogSetHookSecret sets the source's push hook secret ("" clears
	// it); ok is false, and nothing is written, when there is no such
	// source. URL, branch and sync state are not touched.
	CatalogSetHookSecret(ctx context.Context, workspace, id, secret string) (ok bool, err error)

	// CatalogLockSource takes the source's sync lock, which spans
	// transactions and is held until unlock is called: Postgres takes a
	// session advisory lock on a connection of its own (catalog_lock_source,
	// catalog_unlock_source), SQLite, one process per file, an in-process
	// lock. Only ctx bounds the wait.
	CatalogLockSource(ctx context.Context, workspace, id string) (unlock func(), err error)
	// CatalogApplyLock, the first step of a sync's transaction, serializes
	// the syncs of one source until the transaction ends (Postgres locks
	// the source's row; SQLite's one writer serializes them already) and
	// proves the source exists: catalog.ErrNotFound otherwise.
	CatalogApplyLock(ctx context.Context, workspace, id string) error
	// CatalogAppOwners returns, ordered by app key, those of keys that a
	// source of the workspace other than sourceID provides.
	CatalogAppOwners(ctx context.Context, workspace, sourceID string, keys []string) ([]CatalogAppOwner, error)
	// CatalogDeleteApps deletes the source's apps and their actions.
	CatalogDeleteApps(ctx context.Context, workspace, sourceID string) error
	// CatalogInsertApps inserts p.Apps with their actions as the apps of
	// p.SourceID at p.Commit, updated at p.Now (zero: the database's clock).
	// Postgres sends every catalog_insert_app and catalog_insert_action of
	// the commit in one batch, one round trip. A value the schema refuses
	// (an unknown runtime) is spine.ErrInvalid.
	CatalogInsertApps(ctx context.Context, p catalog.SyncParams) error
	// CatalogSourceSynced records commit as the source's commit, synced at
	// now (zero: the database's clock), and clears its error.
	CatalogSourceSynced(ctx context.Context, workspace, id, commit string, now time.Time) error

	// CatalogListApps reads the apps of a workspace (only appKey's when it
	// is not "") ordered by key, and their actions ordered by app and
	// action key, overrides applied. On the pool both reads share one
	// snapshot, so a sync between them cannot pair one commit's apps with
	// another's actions.
	CatalogListApps(ctx context.Context, workspace, appKey string) ([]catalog.App, []CatalogActionRow, error)
	// CatalogAppCommits reads the key, source and commit of every app of
	// a workspace, ordered by key: one indexed read of three columns.
	CatalogAppCommits(ctx context.Context, workspace string) ([]catalog.AppCommit, error)

	// ResolveAction reads the app and the action a job of (workspace, app,
	// action) pins, the action's overrides applied. catalog.ErrNotFound
	// (through catalog.NotFound) for an unknown app or action.
	ResolveAction(ctx context.Context, workspace, app, action string) (catalog.App, catalog.Action, error)
}

// CatalogAppOwner is an app key and the source that provides it.
type CatalogAppOwner struct {
	AppKey   string
	SourceID string
}

// CatalogActionRow is one action with the key of its app.
type CatalogActionRow struct {
	AppKey string
	Action catalog.Action
}
