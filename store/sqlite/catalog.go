package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/windforce/windforce/catalog"
)

// The catalog's queries (queries/catalog_*.sql).
const (
	qCatalogPutSource     query = "catalog_put_source"
	qCatalogGetSource     query = "catalog_get_source"
	qCatalogListSources   query = "catalog_list_sources"
	qCatalogSyncError     query = "catalog_sync_error"
	qCatalogSourceExists  query = "catalog_source_exists"
	qCatalogAppOwners     query = "catalog_app_owners"
	qCatalogDeleteActions query = "catalog_delete_actions"
	qCatalogDeleteApps    query = "catalog_delete_apps"
	qCatalogInsertApp     query = "catalog_insert_app"
	qCatalogInsertAction  query = "catalog_insert_action"
	qCatalogSourceSynced  query = "catalog_source_synced"
	qCatalogListApps      query = "catalog_list_apps"
	qCatalogListActions   query = "catalog_list_actions"
	qCatalogResolve       query = "catalog_resolve"
)

var _ catalog.Store = (*Driver)(nil)

// PutSource creates a source or updates its URL and branch.
func (s *Driver) PutSource(ctx context.Context, src catalog.Source) error {
	err := s.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qCatalogPutSource,
			sql.Named("workspace", src.Workspace), sql.Named("id", src.ID),
			sql.Named("url", src.URL), sql.Named("branch", src.Branch),
			sql.Named("now", micros(resolveNow(src.CreatedAt))))
		return translate(err)
	})
	if err != nil {
		return fmt.Errorf("put source %s/%s: %w", src.Workspace, src.ID, err)
	}
	return nil
}

// GetSource returns one source; catalog.ErrNotFound when missing.
func (s *Driver) GetSource(ctx context.Context, workspace, id string) (catalog.Source, error) {
	rows, err := s.readerQuery(ctx, qCatalogGetSource, sql.Named("workspace", workspace), sql.Named("id", id))
	if err != nil {
		return catalog.Source{}, fmt.Errorf("get source %s/%s: %w", workspace, id, err)
	}
	srcs, err := collect(rows, scanSource)
	if err != nil {
		return catalog.Source{}, fmt.Errorf("get source %s/%s: %w", workspace, id, err)
	}
	if len(srcs) == 0 {
		return catalog.Source{}, fmt.Errorf("%w: source %q in workspace %q", catalog.ErrNotFound, id, workspace)
	}
	return srcs[0], nil
}

// ListSources returns the sources of a workspace, or all when it is "".
func (s *Driver) ListSources(ctx context.Context, workspace string) ([]catalog.Source, error) {
	rows, err := s.readerQuery(ctx, qCatalogListSources, sql.Named("workspace", workspace))
	if err != nil {
		return nil, fmt.Errorf("list sources: %w", err)
	}
	srcs, err := collect(rows, scanSource)
	if err != nil {
		return nil, fmt.Errorf("list sources: %w", err)
	}
	return srcs, nil
}

func scanSource(rows *sql.Rows) (catalog.Source, error) {
	var src catalog.Source
	var syncedAt, errorAt sql.NullInt64
	var createdAt int64
	err := rows.Scan(&src.Workspace, &src.ID, &src.URL, &src.Branch, &src.Commit,
		&syncedAt, &src.Error, &errorAt, &createdAt)
	src.SyncedAt, src.ErrorAt, src.CreatedAt = nullTime(syncedAt), nullTime(errorAt), fromMicros(createdAt)
	return src, err
}

// RecordSyncError records why the last sync failed.
func (s *Driver) RecordSyncError(ctx context.Context, workspace, id, message string) error {
	err := s.write(ctx, func(w *writeTx) error {
		res, err := w.exec(ctx, qCatalogSyncError,
			sql.Named("workspace", workspace), sql.Named("id", id),
			sql.Named("error", message), sql.Named("now", micros(resolveNow(time.Time{}))))
		if err != nil {
			return translate(err)
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			return fmt.Errorf("%w: source %q in workspace %q", catalog.ErrNotFound, id, workspace)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record sync error of %s/%s: %w", workspace, id, err)
	}
	return nil
}

// LockSource serializes syncs of one source in this process (one process
// owns a SQLite file); ApplySync itself runs on the one writer connection.
func (s *Driver) LockSource(ctx context.Context, workspace, id string) (func(), error) {
	v, _ := s.sourceLocks.LoadOrStore(workspace+"\x00"+id, make(chan struct{}, 1))
	slot := v.(chan struct{})
	select {
	case slot <- struct{}{}:
		return func() { <-slot }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("lock source %s/%s: %w", workspace, id, ctx.Err())
	}
}

// errNoRows reports a query that found nothing.
func errNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
