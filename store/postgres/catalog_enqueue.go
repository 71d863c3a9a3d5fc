package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// EnqueueAction is the one enqueue path: resolve, validate, pin and insert
// in one transaction (see catalog.Store).
func (s *Driver) EnqueueAction(ctx context.Context, r catalog.EnqueueRequest) (spine.EnqueueResult, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	var res spine.EnqueueResult
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		res, err = s.EnqueueActionTx(ctx, tx, r)
		return err
	})
	if err != nil {
		return spine.EnqueueResult{}, err
	}
	return res, nil
}

// EnqueueActionTx is EnqueueAction inside the caller's transaction: the
// job exists only if tx commits. It reads the catalog through tx, so the
// pin is what tx sees.
func (s *Driver) EnqueueActionTx(ctx context.Context, tx pgx.Tx, r catalog.EnqueueRequest) (spine.EnqueueResult, error) {
	app, action, err := resolveAction(ctx, tx, r)
	if err != nil {
		return spine.EnqueueResult{}, err
	}
	p, err := catalog.Resolve(r, app, action)
	if err != nil {
		return spine.EnqueueResult{}, err
	}
	return s.EnqueueTx(ctx, tx, p)
}

// resolveAction reads the app and action a job of r pins.
func resolveAction(ctx context.Context, q querier, r catalog.EnqueueRequest) (catalog.App, catalog.Action, error) {
	if r.Workspace == "" || r.App == "" || r.Action == "" {
		return catalog.App{}, catalog.Action{}, fmt.Errorf("enqueue: %w: workspace, app and action are required", spine.ErrInvalid)
	}
	var actionKey *string
	var a catalog.Action
	var o catalog.Overrides
	app, err := scanApp(q.QueryRow(ctx, qCatalogResolveAction, pgx.StrictNamedArgs{
		"workspace": r.Workspace, "app_key": r.App, "action_key": r.Action,
	}), &actionKey, &a.InputSchema, &a.OutputSchema, &o.TimeoutMS, &o.Tag, &o.MaxAttempts, &o.BackoffMS, &o.BackoffFactor,
		&o.LimitMemory, &o.LimitPids, &o.LimitCPU)
	if errors.Is(err, pgx.ErrNoRows) {
		return app, a, fmt.Errorf("enqueue: %w", catalog.NotFound(r.Workspace, r.App, ""))
	}
	if err != nil {
		return app, a, fmt.Errorf("enqueue: read catalog: %w", err)
	}
	if actionKey == nil {
		return app, a, fmt.Errorf("enqueue: %w", catalog.NotFound(r.Workspace, r.App, r.Action))
	}
	a.Key = *actionKey
	applyAction(&a, o)
	return app, a, nil
}

// ResolveAction reads the app and action a job pins (driver.CatalogExecutor).
func (e *executor) ResolveAction(ctx context.Context, workspace, app, action string) (catalog.App, catalog.Action, error) {
	return resolveAction(ctx, e.q, catalog.EnqueueRequest{Workspace: workspace, App: app, Action: action})
}
