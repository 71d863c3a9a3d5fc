package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/store/driver"
)

// PutSource creates a source or updates its URL and branch; its sync
// state (commit, error) is kept, and so is its hook secret when
// src.HookSecret is "".
func (s *Store) PutSource(ctx context.Context, src catalog.Source) error {
	if err := s.ex.CatalogPutSource(ctx, src); err != nil {
		return fmt.Errorf("put source %s/%s: %w", src.Workspace, src.ID, err)
	}
	return nil
}

// SetHookSecret sets, rotates or ("") clears the secret git hosts sign
// the source's push hook with; catalog.ErrNotFound when there is no such
// source, and then nothing is written.
func (s *Store) SetHookSecret(ctx context.Context, workspace, id, secret string) error {
	ok, err := s.ex.CatalogSetHookSecret(ctx, workspace, id, secret)
	if err != nil {
		return sourceError("set hook secret of", workspace, id, err)
	}
	if !ok {
		return sourceError("set hook secret of", workspace, id, catalog.ErrNotFound)
	}
	return nil
}

// GetSource returns one source; catalog.ErrNotFound when it does not exist.
func (s *Store) GetSource(ctx context.Context, workspace, id string) (catalog.Source, error) {
	src, err := s.ex.CatalogGetSource(ctx, workspace, id)
	if err != nil {
		return catalog.Source{}, sourceError("get source", workspace, id, err)
	}
	return src, nil
}

// ListSources returns the sources of a workspace, or of every workspace
// when workspace is "", ordered by workspace and id.
func (s *Store) ListSources(ctx context.Context, workspace string) ([]catalog.Source, error) {
	srcs, err := s.ex.CatalogListSources(ctx, workspace)
	if err != nil {
		return nil, fmt.Errorf("list sources: %w", err)
	}
	return srcs, nil
}

// RecordSyncError records why the last sync of a source failed. The
// catalog itself is left as it was. In the same transaction it writes a
// source.sync_failed event when the error is not the one the source
// already shows (failedChanges).
func (s *Store) RecordSyncError(ctx context.Context, workspace, id, message string) error {
	err := s.ex.Tx(ctx, func(ex driver.Executor) error {
		before, err := lockedSource(ctx, ex, workspace, id)
		if err != nil {
			return err
		}
		if err := ex.CatalogSyncError(ctx, workspace, id, message, time.Time{}); err != nil {
			return err
		}
		if !failedChanges(before, message) {
			return nil
		}
		return sourceEvent(ctx, ex, events.SourceSyncFailed, workspace, id)
	})
	if err != nil {
		return sourceError("record sync error of", workspace, id, err)
	}
	return nil
}

// lockedSource takes the source's row lock for the rest of ex's
// transaction (catalog.ErrNotFound when there is no such source) and
// reads the source as it is under it.
func lockedSource(ctx context.Context, ex driver.Executor, workspace, id string) (catalog.Source, error) {
	if err := ex.CatalogApplyLock(ctx, workspace, id); err != nil {
		return catalog.Source{}, err
	}
	return ex.CatalogGetSource(ctx, workspace, id)
}

// LockSource serializes syncs of one source across servers (a Postgres
// advisory lock; SQLite has one process per file and locks in-process).
// The returned function releases it.
func (s *Store) LockSource(ctx context.Context, workspace, id string) (unlock func(), err error) {
	unlock, err = s.ex.CatalogLockSource(ctx, workspace, id)
	if err != nil {
		return nil, fmt.Errorf("lock source %s/%s: %w", workspace, id, err)
	}
	return unlock, nil
}

// ApplySync replaces the source's apps and actions with p.Apps in one
// transaction (removed ones are deleted) and records p.Commit as the
// source's commit. It refuses, with ErrConflict and no change, an app
// key another source of the workspace already provides. Call it only
// once the commit's tree is complete in the object cache.
//
// Every step runs in the one transaction, so a sync that fails at any of
// them (a conflict, a value the schema refuses) leaves the catalog and
// the source's commit as they were; readers see the old set of apps or
// the new one, never a mix. The source.synced event is written in that
// transaction too, when the sync changed the source (syncedChanges).
func (s *Store) ApplySync(ctx context.Context, p catalog.SyncParams) error {
	err := s.ex.Tx(ctx, func(ex driver.Executor) error {
		before, err := lockedSource(ctx, ex, p.Workspace, p.SourceID)
		if err != nil {
			return sourceError("lock source", p.Workspace, p.SourceID, err)
		}
		if err := checkOwners(ctx, ex, p); err != nil {
			return err
		}
		if err := ex.CatalogDeleteApps(ctx, p.Workspace, p.SourceID); err != nil {
			return fmt.Errorf("delete old apps: %w", err)
		}
		if err := ex.CatalogInsertApps(ctx, p); err != nil {
			return fmt.Errorf("write apps: %w", err)
		}
		if err := ex.CatalogSourceSynced(ctx, p.Workspace, p.SourceID, p.Commit, p.Now); err != nil {
			return fmt.Errorf("record commit: %w", err)
		}
		if !syncedChanges(before, p.Commit) {
			return nil
		}
		return sourceEvent(ctx, ex, events.SourceSynced, p.Workspace, p.SourceID)
	})
	if err != nil {
		return fmt.Errorf("apply sync of %s/%s at %s: %w", p.Workspace, p.SourceID, p.Commit, err)
	}
	return nil
}

// checkOwners refuses, with catalog.ErrConflict naming each one, app keys
// another source of the workspace provides: an app key belongs to one
// source.
func checkOwners(ctx context.Context, ex driver.Executor, p catalog.SyncParams) error {
	keys := make([]string, len(p.Apps))
	for i, a := range p.Apps {
		keys[i] = a.Key
	}
	owners, err := ex.CatalogAppOwners(ctx, p.Workspace, p.SourceID, keys)
	if err != nil {
		return fmt.Errorf("check app owners: %w", err)
	}
	if len(owners) == 0 {
		return nil
	}
	owned := make([]string, len(owners))
	for i, o := range owners {
		owned[i] = fmt.Sprintf("app %q belongs to source %q", o.AppKey, o.SourceID)
	}
	return fmt.Errorf("%w: %s", catalog.ErrConflict, strings.Join(owned, "; "))
}

// ListApps returns the apps of a workspace with their actions, by key.
func (s *Store) ListApps(ctx context.Context, workspace string) ([]catalog.App, error) {
	apps, err := s.readApps(ctx, workspace, "")
	if err != nil {
		return nil, fmt.Errorf("list apps of %s: %w", workspace, err)
	}
	return apps, nil
}

// GetApp returns one app with its actions; ErrNotFound when missing.
func (s *Store) GetApp(ctx context.Context, workspace, key string) (catalog.App, error) {
	if key == "" {
		// "" would read every app of the workspace.
		return catalog.App{}, catalog.NotFound(workspace, key, "")
	}
	apps, err := s.readApps(ctx, workspace, key)
	if err != nil {
		return catalog.App{}, fmt.Errorf("get app %s/%s: %w", workspace, key, err)
	}
	if len(apps) == 0 {
		return catalog.App{}, catalog.NotFound(workspace, key, "")
	}
	return apps[0], nil
}

// AppCommits returns every app of a workspace with its source and
// commit, by key (a worker's warm pool polls it; runner.CatalogReader).
func (s *Store) AppCommits(ctx context.Context, workspace string) ([]catalog.AppCommit, error) {
	apps, err := s.ex.CatalogAppCommits(ctx, workspace)
	if err != nil {
		return nil, fmt.Errorf("read app commits of %s: %w", workspace, err)
	}
	return apps, nil
}

// readApps reads apps (appKey's only, when not "") with their actions
// attached, from the one snapshot the driver reads them in.
func (s *Store) readApps(ctx context.Context, workspace, appKey string) ([]catalog.App, error) {
	apps, actions, err := s.ex.CatalogListApps(ctx, workspace, appKey)
	if err != nil {
		return nil, err
	}
	index := make(map[string]int, len(apps))
	for i, a := range apps {
		index[a.Key] = i
	}
	for _, row := range actions {
		if i, ok := index[row.AppKey]; ok {
			apps[i].Actions = append(apps[i].Actions, row.Action)
		}
	}
	return apps, nil
}

// sourceError is the error of an operation on one source: the catalog's
// not-found for a missing source, else err with what was being done.
func sourceError(doing, workspace, id string, err error) error {
	if errors.Is(err, catalog.ErrNotFound) {
		return fmt.Errorf("%w: source %q in workspace %q", catalog.ErrNotFound, id, workspace)
	}
	return fmt.Errorf("%s %s/%s: %w", doing, workspace, id, err)
}
