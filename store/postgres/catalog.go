package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/catalog"
)

// The catalog's queries (queries/catalog_*.sql).
var (
	qCatalogPutSource     = mustQuery("catalog_put_source")
	qCatalogGetSource     = mustQuery("catalog_get_source")
	qCatalogListSources   = mustQuery("catalog_list_sources")
	qCatalogSyncError     = mustQuery("catalog_sync_error")
	qCatalogSetHookSecret = mustQuery("catalog_set_hook_secret")
	qCatalogLockSource    = mustQuery("catalog_lock_source")
	qCatalogUnlockSource  = mustQuery("catalog_unlock_source")
	qCatalogApplyLock     = mustQuery("catalog_apply_lock")
	qCatalogAppOwners     = mustQuery("catalog_app_owners")
	qCatalogDeleteApps    = mustQuery("catalog_delete_apps")
	qCatalogInsertApp     = mustQuery("catalog_insert_app")
	qCatalogInsertAction  = mustQuery("catalog_insert_action")
	qCatalogSourceSynced  = mustQuery("catalog_source_synced")
	qCatalogListApps      = mustQuery("catalog_list_apps")
	qCatalogListActions   = mustQuery("catalog_list_actions")
	qCatalogAppCommits    = mustQuery("catalog_app_commits")
	qCatalogResolveAction = mustQuery("catalog_resolve")
)

// CatalogPutSource creates a source or updates its URL and branch
// (driver.CatalogExecutor).
func (e *executor) CatalogPutSource(ctx context.Context, src catalog.Source) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	_, err := e.q.Exec(ctx, qCatalogPutSource, namedArgs{
		"workspace": src.Workspace, "id": src.ID, "url": src.URL, "branch": src.Branch,
		"hook_secret": src.HookSecret, "now": timeArg(src.CreatedAt),
	})
	return translate(err)
}

// CatalogGetSource reads one source (driver.CatalogExecutor).
func (e *executor) CatalogGetSource(ctx context.Context, workspace, id string) (catalog.Source, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qCatalogGetSource, namedArgs{"workspace": workspace, "id": id})
	if err != nil {
		return catalog.Source{}, err
	}
	src, err := pgx.CollectExactlyOneRow(rows, scanSource)
	if errors.Is(err, pgx.ErrNoRows) {
		return catalog.Source{}, catalog.ErrNotFound
	}
	return src, err
}

// CatalogListSources reads the sources of a workspace, or all when it is
// "" (driver.CatalogExecutor).
func (e *executor) CatalogListSources(ctx context.Context, workspace string) ([]catalog.Source, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qCatalogListSources, namedArgs{"workspace": workspace})
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanSource)
}

// CatalogAppCommits reads where each app of a workspace is now
// (driver.CatalogExecutor).
func (e *executor) CatalogAppCommits(ctx context.Context, workspace string) ([]catalog.AppCommit, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qCatalogAppCommits, namedArgs{"workspace": workspace})
	if err != nil {
		return nil, translate(err)
	}
	apps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (catalog.AppCommit, error) {
		var a catalog.AppCommit
		err := r.Scan(&a.AppKey, &a.SourceID, &a.CommitSHA)
		return a, err
	})
	return apps, translate(err)
}

func scanSource(row pgx.CollectableRow) (catalog.Source, error) {
	var src catalog.Source
	var syncedAt, errorAt *time.Time
	err := row.Scan(&src.Workspace, &src.ID, &src.URL, &src.Branch, &src.Commit,
		&syncedAt, &src.Error, &errorAt, &src.CreatedAt, &src.HookSecret)
	src.SyncedAt, src.ErrorAt = ptrTime(syncedAt), ptrTime(errorAt)
	return src, err
}

// CatalogSyncError records why the last sync failed (driver.CatalogExecutor).
func (e *executor) CatalogSyncError(ctx context.Context, workspace, id, message string, now time.Time) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	tag, err := e.q.Exec(ctx, qCatalogSyncError, namedArgs{
		"workspace": workspace, "id": id, "error": message, "now": timeArg(now),
	})
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() == 0 {
		return catalog.ErrNotFound
	}
	return nil
}

// CatalogSetHookSecret sets or clears a source's push hook secret
// (driver.CatalogExecutor).
func (e *executor) CatalogSetHookSecret(ctx context.Context, workspace, id, secret string) (bool, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	tag, err := e.q.Exec(ctx, qCatalogSetHookSecret, namedArgs{
		"workspace": workspace, "id": id, "hook_secret": secret,
	})
	if err != nil {
		return false, translate(err)
	}
	return tag.RowsAffected() > 0, nil
}

// CatalogLockSource takes a session advisory lock for the source on a
// connection of its own, held until unlock: syncs of one source on many
// servers run one after the other. Only ctx bounds the wait
// (driver.CatalogExecutor).
func (e *executor) CatalogLockSource(ctx context.Context, workspace, id string) (func(), error) {
	conn, err := e.d.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	args := namedArgs{"workspace": workspace, "id": id}
	if _, err := conn.Exec(ctx, qCatalogLockSource, args); err != nil {
		conn.Release()
		return nil, err
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), e.d.timeout)
		defer cancel()
		if _, err := conn.Exec(ctx, qCatalogUnlockSource, args); err != nil {
			// A connection that still holds the lock must not go back to
			// the pool; closing it ends the session and the lock.
			e.d.log.Warn("unlock source failed; closing its connection", "source", workspace+"/"+id, "err", err)
			_ = conn.Conn().Close(ctx)
		}
		conn.Release()
	}, nil
}
