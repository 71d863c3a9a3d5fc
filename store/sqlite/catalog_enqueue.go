package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/windforce/windforce/catalog"
)

// ResolveAction reads the app and action a job pins, with the action's
// overrides applied (driver.CatalogExecutor).
func (e *executor) ResolveAction(ctx context.Context, workspace, app, action string) (catalog.App, catalog.Action, error) {
	rows, err := e.read(ctx, qCatalogResolve, sql.Named("workspace", workspace), sql.Named("app_key", app), sql.Named("action_key", action))
	if err != nil {
		return catalog.App{}, catalog.Action{}, fmt.Errorf("enqueue: read catalog: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return catalog.App{}, catalog.Action{}, fmt.Errorf("enqueue: read catalog: %w", err)
		}
		return catalog.App{}, catalog.Action{}, fmt.Errorf("enqueue: %w", catalog.NotFound(workspace, app, ""))
	}
	var actionKey sql.NullString
	var c actionCols
	a, err := scanApp(rows, &actionKey, &c.input, &c.output,
		&c.timeoutMS, &c.tag, &c.maxAttempts, &c.backoffMS, &c.factor,
		&c.memory, &c.pids, &c.cpu, &c.env, &c.warm)
	if err != nil {
		return a, catalog.Action{}, fmt.Errorf("enqueue: read catalog: %w", err)
	}
	if !actionKey.Valid {
		return a, catalog.Action{}, fmt.Errorf("enqueue: %w", catalog.NotFound(workspace, app, action))
	}
	act := catalog.Action{Key: actionKey.String}
	if err := c.apply(&act); err != nil {
		return a, act, fmt.Errorf("enqueue: read catalog: %w", err)
	}
	return a, act, nil
}
