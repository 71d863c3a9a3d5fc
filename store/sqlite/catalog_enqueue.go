package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// EnqueueAction is the one enqueue path: resolve, validate, pin and insert
// in one write transaction (see catalog.Store). The wake-up is sent after
// the commit.
func (s *Driver) EnqueueAction(ctx context.Context, r catalog.EnqueueRequest) (spine.EnqueueResult, error) {
	var res spine.EnqueueResult
	err := s.WithTx(ctx, func(tx *sql.Tx) error {
		var err error
		res, err = s.EnqueueActionTx(ctx, tx, r)
		return err
	})
	if err != nil {
		return spine.EnqueueResult{}, err
	}
	return res, nil
}

// EnqueueActionTx is EnqueueAction inside the caller's transaction (one
// WithTx gave): the job exists only if tx commits.
func (s *Driver) EnqueueActionTx(ctx context.Context, tx *sql.Tx, r catalog.EnqueueRequest) (spine.EnqueueResult, error) {
	app, action, err := s.resolveAction(ctx, tx, r)
	if err != nil {
		return spine.EnqueueResult{}, err
	}
	p, err := catalog.Resolve(r, app, action)
	if err != nil {
		return spine.EnqueueResult{}, err
	}
	return s.EnqueueTx(ctx, tx, p)
}

// resolveAction reads, through tx, the app and action a job of r pins.
func (s *Driver) resolveAction(ctx context.Context, tx *sql.Tx, r catalog.EnqueueRequest) (catalog.App, catalog.Action, error) {
	w := s.registered(tx)
	if w == nil {
		w = s.newWriteTx(tx)
	}
	return (&executor{d: s, w: w}).ResolveAction(ctx, r.Workspace, r.App, r.Action)
}

// ResolveAction reads the app and action a job pins, with the action's
// overrides applied (driver.CatalogExecutor).
func (e *executor) ResolveAction(ctx context.Context, workspace, app, action string) (catalog.App, catalog.Action, error) {
	if workspace == "" || app == "" || action == "" {
		return catalog.App{}, catalog.Action{}, fmt.Errorf("enqueue: %w: workspace, app and action are required", spine.ErrInvalid)
	}
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
		&c.memory, &c.pids, &c.cpu)
	if err != nil {
		return a, catalog.Action{}, fmt.Errorf("enqueue: read catalog: %w", err)
	}
	if !actionKey.Valid {
		return a, catalog.Action{}, fmt.Errorf("enqueue: %w", catalog.NotFound(workspace, app, action))
	}
	act := catalog.Action{Key: actionKey.String}
	c.apply(&act)
	return a, act, nil
}
