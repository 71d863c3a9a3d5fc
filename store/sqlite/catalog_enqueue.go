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
func (s *Store) EnqueueAction(ctx context.Context, r catalog.EnqueueRequest) (spine.EnqueueResult, error) {
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
func (s *Store) EnqueueActionTx(ctx context.Context, tx *sql.Tx, r catalog.EnqueueRequest) (spine.EnqueueResult, error) {
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
func (s *Store) resolveAction(ctx context.Context, tx *sql.Tx, r catalog.EnqueueRequest) (catalog.App, catalog.Action, error) {
	if r.Workspace == "" || r.App == "" || r.Action == "" {
		return catalog.App{}, catalog.Action{}, fmt.Errorf("enqueue: %w: workspace, app and action are required", spine.ErrInvalid)
	}
	args := []any{sql.Named("workspace", r.Workspace), sql.Named("app_key", r.App), sql.Named("action_key", r.Action)}
	var row rowScanner
	if w := s.registered(tx); w != nil {
		row = w.queryRow(ctx, qCatalogResolve, args...)
	} else {
		row = tx.QueryRowContext(ctx, sqlOf(qCatalogResolve), args...)
	}
	var actionKey sql.NullString
	var o overrides
	app, err := scanApp(row, &actionKey, &o.input, &o.output,
		&o.timeoutMS, &o.tag, &o.maxAttempts, &o.backoffMS, &o.factor,
		&o.limits.memory, &o.limits.pids, &o.limits.cpu)
	if errNoRows(err) {
		return app, catalog.Action{}, fmt.Errorf("enqueue: %w", catalog.NotFound(r.Workspace, r.App, ""))
	}
	if err != nil {
		return app, catalog.Action{}, fmt.Errorf("enqueue: read catalog: %w", err)
	}
	if !actionKey.Valid {
		return app, catalog.Action{}, fmt.Errorf("enqueue: %w", catalog.NotFound(r.Workspace, r.App, r.Action))
	}
	a := catalog.Action{Key: actionKey.String}
	o.apply(&a)
	return app, a, nil
}
