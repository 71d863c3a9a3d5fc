package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// ApplySync replaces the source's apps and actions in one transaction,
// under the source row's lock.
func (s *Driver) ApplySync(ctx context.Context, p catalog.SyncParams) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	err := s.inTx(ctx, func(tx pgx.Tx) error { return applySync(ctx, tx, p) })
	if err != nil {
		return fmt.Errorf("apply sync of %s/%s at %s: %w", p.Workspace, p.SourceID, p.Commit, err)
	}
	return nil
}

func applySync(ctx context.Context, tx pgx.Tx, p catalog.SyncParams) error {
	src := pgx.StrictNamedArgs{"workspace": p.Workspace, "id": p.SourceID}
	var id string
	if err := tx.QueryRow(ctx, qCatalogApplyLock, src).Scan(&id); errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: source %q in workspace %q", catalog.ErrNotFound, p.SourceID, p.Workspace)
	} else if err != nil {
		return fmt.Errorf("lock source: %w", err)
	}
	if err := checkOwners(ctx, tx, p); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, qCatalogDeleteApps, pgx.StrictNamedArgs{"workspace": p.Workspace, "source_id": p.SourceID}); err != nil {
		return fmt.Errorf("delete old apps: %w", err)
	}
	batch := &pgx.Batch{}
	for _, app := range p.Apps {
		batch.Queue(qCatalogInsertApp, appArgs(p, app))
		for _, a := range app.Actions {
			batch.Queue(qCatalogInsertAction, actionArgs(p.Workspace, app.Key, a))
		}
	}
	batch.Queue(qCatalogSourceSynced, pgx.StrictNamedArgs{
		"workspace": p.Workspace, "id": p.SourceID, "commit_sha": p.Commit, "now": timeArg(p.Now),
	})
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("write apps: %w", translate(err))
	}
	return nil
}

// checkOwners refuses app keys another source of the workspace provides.
func checkOwners(ctx context.Context, tx pgx.Tx, p catalog.SyncParams) error {
	keys := make([]string, len(p.Apps))
	for i, a := range p.Apps {
		keys[i] = a.Key
	}
	rows, err := tx.Query(ctx, qCatalogAppOwners, pgx.StrictNamedArgs{
		"workspace": p.Workspace, "keys": keys, "source_id": p.SourceID,
	})
	if err != nil {
		return fmt.Errorf("check app owners: %w", err)
	}
	owned, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var app, owner string
		err := r.Scan(&app, &owner)
		return fmt.Sprintf("app %q belongs to source %q", app, owner), err
	})
	if err != nil {
		return fmt.Errorf("check app owners: %w", err)
	}
	if len(owned) > 0 {
		return fmt.Errorf("%w: %s", catalog.ErrConflict, strings.Join(owned, "; "))
	}
	return nil
}

func appArgs(p catalog.SyncParams, app catalog.App) pgx.StrictNamedArgs {
	memory, pids, cpu := app.Limits.Columns()
	return pgx.StrictNamedArgs{
		"workspace": p.Workspace, "app_key": app.Key, "source_id": p.SourceID, "commit_sha": p.Commit,
		"entrypoint": app.Entrypoint, "runtime": app.Runtime, "timeout_ms": app.Timeout.Milliseconds(),
		"tag": app.Tag, "max_attempts": app.Retry.MaxAttempts, "backoff_ms": app.Retry.Backoff.Milliseconds(),
		"backoff_factor": app.Retry.Factor, "limit_memory": memory, "limit_pids": pids, "limit_cpu": cpu,
		"now": timeArg(p.Now),
	}
}

func actionArgs(workspace, appKey string, a catalog.Action) pgx.StrictNamedArgs {
	args := pgx.StrictNamedArgs{
		"workspace": workspace, "app_key": appKey, "action_key": a.Key,
		"input_schema": jsonArg(a.InputSchema), "output_schema": jsonArg(a.OutputSchema),
		"timeout_ms": nil, "tag": nil, "max_attempts": nil, "backoff_ms": nil, "backoff_factor": nil,
	}
	args["limit_memory"], args["limit_pids"], args["limit_cpu"] = a.Limits.Columns()
	if a.Timeout > 0 {
		args["timeout_ms"] = a.Timeout.Milliseconds()
	}
	if a.Tag != "" {
		args["tag"] = a.Tag
	}
	if r := a.Retry; r != nil {
		args["max_attempts"], args["backoff_ms"], args["backoff_factor"] = r.MaxAttempts, r.Backoff.Milliseconds(), r.Factor
	}
	return args
}

// ListApps returns a workspace's apps with their actions.
func (s *Driver) ListApps(ctx context.Context, workspace string) ([]catalog.App, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	apps, err := s.readApps(ctx, workspace, "")
	if err != nil {
		return nil, fmt.Errorf("list apps of %s: %w", workspace, err)
	}
	return apps, nil
}

// GetApp returns one app with its actions; catalog.ErrNotFound if missing.
func (s *Driver) GetApp(ctx context.Context, workspace, key string) (catalog.App, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	if key == "" {
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

// readApps reads apps and then their actions in one snapshot (a
// repeatable-read transaction), so a sync between the two reads cannot
// pair one commit's apps with another's actions.
func (s *Driver) readApps(ctx context.Context, workspace, appKey string) ([]catalog.App, error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	args := pgx.StrictNamedArgs{"workspace": workspace, "app_key": appKey}
	rows, err := tx.Query(ctx, qCatalogListApps, args)
	if err != nil {
		return nil, err
	}
	apps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (catalog.App, error) { return scanApp(r) })
	if err != nil {
		return nil, err
	}
	index := map[string]int{}
	for i, a := range apps {
		index[a.Key] = i
	}
	rows, err = tx.Query(ctx, qCatalogListActions, args)
	if err != nil {
		return nil, err
	}
	_, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct{}, error) {
		var appKey string
		var a catalog.Action
		var o overrides
		if err := r.Scan(&appKey, &a.Key, &a.InputSchema, &a.OutputSchema,
			&o.timeoutMS, &o.tag, &o.maxAttempts, &o.backoffMS, &o.factor,
			&o.limits.memory, &o.limits.pids, &o.limits.cpu); err != nil {
			return struct{}{}, err
		}
		o.apply(&a)
		if i, ok := index[appKey]; ok {
			apps[i].Actions = append(apps[i].Actions, a)
		}
		return struct{}{}, nil
	})
	return apps, err
}

// scanApp reads the 15 app columns of catalog_list_apps and catalog_resolve.
func scanApp(r pgx.Row, more ...any) (catalog.App, error) {
	var a catalog.App
	var timeoutMS, backoffMS int64
	var limits limitCols
	dest := append([]any{&a.Workspace, &a.Key, &a.SourceID, &a.CommitSHA, &a.Entrypoint, &a.Runtime,
		&timeoutMS, &a.Tag, &a.Retry.MaxAttempts, &backoffMS, &a.Retry.Factor,
		&limits.memory, &limits.pids, &limits.cpu, &a.UpdatedAt}, more...)
	if err := r.Scan(dest...); err != nil {
		return a, err
	}
	a.Timeout = time.Duration(timeoutMS) * time.Millisecond
	a.Retry.Backoff = time.Duration(backoffMS) * time.Millisecond
	a.Limits = limits.limits()
	return a, nil
}

// overrides are an action's nullable override columns.
type overrides struct {
	timeoutMS, backoffMS *int64
	tag                  *string
	maxAttempts          *int
	factor               *float64
	limits               limitCols
}

func (o overrides) apply(a *catalog.Action) {
	a.InputSchema, a.OutputSchema = compactJSON(a.InputSchema), compactJSON(a.OutputSchema)
	if o.timeoutMS != nil {
		a.Timeout = time.Duration(*o.timeoutMS) * time.Millisecond
	}
	if o.tag != nil {
		a.Tag = *o.tag
	}
	if o.maxAttempts != nil && o.backoffMS != nil && o.factor != nil {
		a.Retry = &spine.RetryPolicy{MaxAttempts: *o.maxAttempts, Backoff: time.Duration(*o.backoffMS) * time.Millisecond, Factor: *o.factor}
	}
	a.Limits = o.limits.limits()
}
