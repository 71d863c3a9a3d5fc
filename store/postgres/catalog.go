package postgres

import (
	"context"
	"errors"
	"fmt"
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
	qCatalogResolveAction = mustQuery("catalog_resolve")
)

var _ catalog.Store = (*Driver)(nil)

// PutSource creates a source or updates its URL and branch.
func (s *Driver) PutSource(ctx context.Context, src catalog.Source) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	_, err := s.pool.Exec(ctx, qCatalogPutSource, pgx.StrictNamedArgs{
		"workspace": src.Workspace, "id": src.ID, "url": src.URL, "branch": src.Branch,
		"now": timeArg(src.CreatedAt),
	})
	if err != nil {
		return fmt.Errorf("put source %s/%s: %w", src.Workspace, src.ID, translate(err))
	}
	return nil
}

// GetSource returns one source; catalog.ErrNotFound when missing.
func (s *Driver) GetSource(ctx context.Context, workspace, id string) (catalog.Source, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, qCatalogGetSource, pgx.StrictNamedArgs{"workspace": workspace, "id": id})
	if err != nil {
		return catalog.Source{}, fmt.Errorf("get source %s/%s: %w", workspace, id, err)
	}
	src, err := pgx.CollectExactlyOneRow(rows, scanSource)
	if errors.Is(err, pgx.ErrNoRows) {
		return catalog.Source{}, fmt.Errorf("%w: source %q in workspace %q", catalog.ErrNotFound, id, workspace)
	}
	if err != nil {
		return catalog.Source{}, fmt.Errorf("get source %s/%s: %w", workspace, id, err)
	}
	return src, nil
}

// ListSources returns the sources of a workspace, or all when it is "".
func (s *Driver) ListSources(ctx context.Context, workspace string) ([]catalog.Source, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, qCatalogListSources, pgx.StrictNamedArgs{"workspace": workspace})
	if err != nil {
		return nil, fmt.Errorf("list sources: %w", err)
	}
	srcs, err := pgx.CollectRows(rows, scanSource)
	if err != nil {
		return nil, fmt.Errorf("list sources: %w", err)
	}
	return srcs, nil
}

func scanSource(row pgx.CollectableRow) (catalog.Source, error) {
	var src catalog.Source
	var syncedAt, errorAt *time.Time
	err := row.Scan(&src.Workspace, &src.ID, &src.URL, &src.Branch, &src.Commit,
		&syncedAt, &src.Error, &errorAt, &src.CreatedAt)
	src.SyncedAt, src.ErrorAt = ptrTime(syncedAt), ptrTime(errorAt)
	return src, err
}

// RecordSyncError records why the last sync failed.
func (s *Driver) RecordSyncError(ctx context.Context, workspace, id, message string) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	tag, err := s.pool.Exec(ctx, qCatalogSyncError, pgx.StrictNamedArgs{
		"workspace": workspace, "id": id, "error": message, "now": nil,
	})
	if err != nil {
		return fmt.Errorf("record sync error of %s/%s: %w", workspace, id, translate(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: source %q in workspace %q", catalog.ErrNotFound, id, workspace)
	}
	return nil
}

// LockSource takes a session advisory lock for the source on a connection
// of its own, held until unlock: syncs of one source on many servers run
// one after the other. Only ctx bounds the wait.
func (s *Driver) LockSource(ctx context.Context, workspace, id string) (func(), error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("lock source %s/%s: %w", workspace, id, err)
	}
	args := pgx.StrictNamedArgs{"workspace": workspace, "id": id}
	if _, err := conn.Exec(ctx, qCatalogLockSource, args); err != nil {
		conn.Release()
		return nil, fmt.Errorf("lock source %s/%s: %w", workspace, id, err)
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		defer cancel()
		if _, err := conn.Exec(ctx, qCatalogUnlockSource, args); err != nil {
			// A connection that still holds the lock must not go back to
			// the pool; closing it ends the session and the lock.
			s.log.Warn("unlock source failed; closing its connection", "source", workspace+"/"+id, "err", err)
			_ = conn.Conn().Close(ctx)
		}
		conn.Release()
	}, nil
}
