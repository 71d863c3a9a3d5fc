package store

import (
	"context"

	"github.com/windforce/windforce/catalog"
)

// legacyCatalog is the part of the catalog unit the driver still answers
// (transitional).
type legacyCatalog interface {
	PutSource(ctx context.Context, s catalog.Source) error
	GetSource(ctx context.Context, workspace, id string) (catalog.Source, error)
	ListSources(ctx context.Context, workspace string) ([]catalog.Source, error)
	RecordSyncError(ctx context.Context, workspace, id, message string) error
	ApplySync(ctx context.Context, p catalog.SyncParams) error
	LockSource(ctx context.Context, workspace, id string) (unlock func(), err error)
	ListApps(ctx context.Context, workspace string) ([]catalog.App, error)
	GetApp(ctx context.Context, workspace, key string) (catalog.App, error)
}
