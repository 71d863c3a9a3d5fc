package driver

import (
	"context"

	"github.com/windforce/windforce/catalog"
)

// CatalogExecutor keeps sources, apps and actions.
type CatalogExecutor interface {
	// ResolveAction reads the app and the action a job of (workspace, app,
	// action) pins, the action's overrides applied. catalog.ErrNotFound
	// (through catalog.NotFound) for an unknown app or action.
	ResolveAction(ctx context.Context, workspace, app, action string) (catalog.App, catalog.Action, error)
}
