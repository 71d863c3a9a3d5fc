package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/catalog"
)

// ResolveAction reads the app and action a job pins, with the action's
// overrides applied (driver.CatalogExecutor).
func (e *executor) ResolveAction(ctx context.Context, workspace, appKey, actionKey string) (catalog.App, catalog.Action, error) {
	var gotKey *string
	var a catalog.Action
	var o catalog.Overrides
	app, err := scanApp(e.q.QueryRow(ctx, qCatalogResolveAction, namedArgs{
		"workspace": workspace, "app_key": appKey, "action_key": actionKey,
	}), &gotKey, &a.InputSchema, &a.OutputSchema, &o.TimeoutMS, &o.Tag, &o.MaxAttempts, &o.BackoffMS, &o.BackoffFactor,
		&o.LimitMemory, &o.LimitPids, &o.LimitCPU, &o.Env, &o.Warm)
	if errors.Is(err, pgx.ErrNoRows) {
		return app, a, fmt.Errorf("enqueue: %w", catalog.NotFound(workspace, appKey, ""))
	}
	if err != nil {
		return app, a, fmt.Errorf("enqueue: read catalog: %w", err)
	}
	if gotKey == nil {
		return app, a, fmt.Errorf("enqueue: %w", catalog.NotFound(workspace, appKey, actionKey))
	}
	a.Key = *gotKey
	if err := applyAction(&a, o); err != nil {
		return app, a, fmt.Errorf("enqueue: read catalog: %w", err)
	}
	return app, a, nil
}
