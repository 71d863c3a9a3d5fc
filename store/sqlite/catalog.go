package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/windforce/windforce/catalog"
)

// The catalog's queries (queries/catalog_*.sql).
const (
	qCatalogPutSource     query = "catalog_put_source"
	qCatalogGetSource     query = "catalog_get_source"
	qCatalogListSources   query = "catalog_list_sources"
	qCatalogSyncError     query = "catalog_sync_error"
	qCatalogSetHookSecret query = "catalog_set_hook_secret"
	qCatalogApplyLock     query = "catalog_apply_lock"
	qCatalogAppOwners     query = "catalog_app_owners"
	qCatalogDeleteActions query = "catalog_delete_actions"
	qCatalogDeleteApps    query = "catalog_delete_apps"
	qCatalogInsertApp     query = "catalog_insert_app"
	qCatalogInsertAction  query = "catalog_insert_action"
	qCatalogSourceSynced  query = "catalog_source_synced"
	qCatalogListApps      query = "catalog_list_apps"
	qCatalogListActions   query = "catalog_list_actions"
	qCatalogResolve       query = "catalog_resolve"
	qCatalogAppCommits    query = "catalog_app_commits"
	qCatalogAppAtCommit   query = "catalog_app_at_commit"
)

// CatalogPutSource creates a source or updates its URL and branch
// (driver.CatalogExecutor).
func (e *executor) CatalogPutSource(ctx context.Context, src catalog.Source) error {
	return e.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qCatalogPutSource,
			sql.Named("workspace", src.Workspace), sql.Named("id", src.ID),
			sql.Named("url", src.URL), sql.Named("branch", src.Branch),
			sql.Named("hook_secret", src.HookSecret), sql.Named("now", micros(resolveNow(src.CreatedAt))))
		return translate(err)
	})
}

// CatalogGetSource reads one source (driver.CatalogExecutor).
func (e *executor) CatalogGetSource(ctx context.Context, workspace, id string) (catalog.Source, error) {
	rows, err := e.read(ctx, qCatalogGetSource, sql.Named("workspace", workspace), sql.Named("id", id))
	if err != nil {
		return catalog.Source{}, err
	}
	srcs, err := collect(rows, scanSource)
	if err != nil {
		return catalog.Source{}, err
	}
	if len(srcs) == 0 {
		return catalog.Source{}, catalog.ErrNotFound
	}
	return srcs[0], nil
}

// CatalogListSources reads the sources of a workspace, or all when it is
// "" (driver.CatalogExecutor).
func (e *executor) CatalogListSources(ctx context.Context, workspace string) ([]catalog.Source, error) {
	rows, err := e.read(ctx, qCatalogListSources, sql.Named("workspace", workspace))
	if err != nil {
		return nil, err
	}
	return collect(rows, scanSource)
}

// CatalogAppCommits reads where each app of a workspace is now
// (driver.CatalogExecutor).
func (e *executor) CatalogAppCommits(ctx context.Context, workspace string) ([]catalog.AppCommit, error) {
	rows, err := e.read(ctx, qCatalogAppCommits, sql.Named("workspace", workspace))
	if err != nil {
		return nil, err
	}
	return collect(rows, func(r *sql.Rows) (catalog.AppCommit, error) {
		var a catalog.AppCommit
		err := r.Scan(&a.AppKey, &a.SourceID, &a.CommitSHA)
		return a, err
	})
}

func scanSource(rows *sql.Rows) (catalog.Source, error) {
	var src catalog.Source
	var syncedAt, errorAt sql.NullInt64
	var createdAt int64
	err := rows.Scan(&src.Workspace, &src.ID, &src.URL, &src.Branch, &src.Commit,
		&syncedAt, &src.Error, &errorAt, &createdAt, &src.HookSecret)
	src.SyncedAt, src.ErrorAt, src.CreatedAt = nullTime(syncedAt), nullTime(errorAt), fromMicros(createdAt)
	return src, err
}

// CatalogSyncError records why the last sync failed (driver.CatalogExecutor).
func (e *executor) CatalogSyncError(ctx context.Context, workspace, id, message string, now time.Time) error {
	return e.write(ctx, func(w *writeTx) error {
		res, err := w.exec(ctx, qCatalogSyncError,
			sql.Named("workspace", workspace), sql.Named("id", id),
			sql.Named("error", message), sql.Named("now", micros(resolveNow(now))))
		if err != nil {
			return translate(err)
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			return catalog.ErrNotFound
		}
		return nil
	})
}

// CatalogSetHookSecret sets or clears a source's push hook secret
// (driver.CatalogExecutor).
func (e *executor) CatalogSetHookSecret(ctx context.Context, workspace, id, secret string) (bool, error) {
	var ok bool
	err := e.write(ctx, func(w *writeTx) error {
		res, err := w.exec(ctx, qCatalogSetHookSecret,
			sql.Named("workspace", workspace), sql.Named("id", id), sql.Named("hook_secret", secret))
		if err != nil {
			return translate(err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		ok = n > 0
		return nil
	})
	return ok, err
}

// CatalogLockSource serializes syncs of one source in this process (one
// process owns a SQLite file); a sync's transaction itself runs on the one
// writer connection (driver.CatalogExecutor).
func (e *executor) CatalogLockSource(ctx context.Context, workspace, id string) (func(), error) {
	v, _ := e.d.sourceLocks.LoadOrStore(workspace+"\x00"+id, make(chan struct{}, 1))
	slot := v.(chan struct{})
	select {
	case slot <- struct{}{}:
		return func() { <-slot }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// errNoRows reports a query that found nothing.
func errNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
