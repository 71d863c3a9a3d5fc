package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// CatalogApplyLock locks the source's row until the transaction ends, so
// applies of one source are serialized, and proves the source exists
// (driver.CatalogExecutor).
func (e *executor) CatalogApplyLock(ctx context.Context, workspace, id string) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	var got string
	err := e.q.QueryRow(ctx, qCatalogApplyLock, namedArgs{"workspace": workspace, "id": id}).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return catalog.ErrNotFound
	}
	return err
}

// CatalogAppOwners returns those of keys another source of the workspace
// provides (driver.CatalogExecutor).
func (e *executor) CatalogAppOwners(ctx context.Context, workspace, sourceID string, keys []string) ([]driver.CatalogAppOwner, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qCatalogAppOwners, namedArgs{
		"workspace": workspace, "keys": keys, "source_id": sourceID,
	})
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (driver.CatalogAppOwner, error) {
		var o driver.CatalogAppOwner
		err := r.Scan(&o.AppKey, &o.SourceID)
		return o, err
	})
}

// CatalogDeleteApps deletes the source's apps; their actions cascade
// (driver.CatalogExecutor).
func (e *executor) CatalogDeleteApps(ctx context.Context, workspace, sourceID string) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	_, err := e.q.Exec(ctx, qCatalogDeleteApps, namedArgs{"workspace": workspace, "source_id": sourceID})
	return translate(err)
}

// CatalogInsertApps inserts the commit's apps and actions in one batch
// (driver.CatalogExecutor).
func (e *executor) CatalogInsertApps(ctx context.Context, p catalog.SyncParams) error {
	if len(p.Apps) == 0 {
		return nil
	}
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	batch := &pgx.Batch{}
	for _, app := range p.Apps {
		batch.Queue(qCatalogInsertApp, appArgs(p, app))
		for _, a := range app.Actions {
			batch.Queue(qCatalogInsertAction, actionArgs(p.Workspace, app.Key, a))
		}
	}
	var br pgx.BatchResults
	if e.tx != nil {
		br = e.tx.SendBatch(ctx, batch)
	} else {
		br = e.d.pool.SendBatch(ctx, batch)
	}
	return translate(br.Close())
}

// CatalogSourceSynced records the source's new commit and clears its
// error (driver.CatalogExecutor).
func (e *executor) CatalogSourceSynced(ctx context.Context, workspace, id, commit string, now time.Time) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	_, err := e.q.Exec(ctx, qCatalogSourceSynced, namedArgs{
		"workspace": workspace, "id": id, "commit_sha": commit, "now": timeArg(now),
	})
	return translate(err)
}

func appArgs(p catalog.SyncParams, app catalog.App) namedArgs {
	memory, pids, cpu := app.Limits.Columns()
	return namedArgs{
		"workspace": p.Workspace, "app_key": app.Key, "source_id": p.SourceID, "commit_sha": p.Commit,
		"entrypoint": app.Entrypoint, "runtime": app.Runtime, "timeout_ms": app.Timeout.Milliseconds(),
		"tag": app.Tag, "max_attempts": app.Retry.MaxAttempts, "backoff_ms": app.Retry.Backoff.Milliseconds(),
		"backoff_factor": app.Retry.Factor, "limit_memory": memory, "limit_pids": pids, "limit_cpu": cpu,
		"env": spine.EnvColumn(app.Env), "warm": spine.WarmColumn(app.Warm),
		"now": timeArg(p.Now),
	}
}

func actionArgs(workspace, appKey string, a catalog.Action) namedArgs {
	o := catalog.OverridesOf(a)
	return namedArgs{
		"workspace": workspace, "app_key": appKey, "action_key": a.Key,
		"input_schema": jsonArg(a.InputSchema), "output_schema": jsonArg(a.OutputSchema),
		"timeout_ms": o.TimeoutMS, "tag": o.Tag, "max_attempts": o.MaxAttempts,
		"backoff_ms": o.BackoffMS, "backoff_factor": o.BackoffFactor,
		"limit_memory": o.LimitMemory, "limit_pids": o.LimitPids, "limit_cpu": o.LimitCPU,
		"env": o.Env, "warm": o.Warm,
	}
}

// CatalogListApps reads apps and then their actions in one snapshot (a
// repeatable-read transaction on the pool), so a sync between the two
// reads cannot pair one commit's apps with another's actions. Inside a
// transaction both reads go through it (driver.CatalogExecutor).
func (e *executor) CatalogListApps(ctx context.Context, workspace, appKey string) ([]catalog.App, []driver.CatalogActionRow, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	q := e.q
	if e.tx == nil {
		tx, err := e.d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			return nil, nil, translate(err)
		}
		defer tx.Rollback(ctx) //nolint:errcheck // read-only
		q = tx
	}
	args := namedArgs{"workspace": workspace, "app_key": appKey}
	rows, err := q.Query(ctx, qCatalogListApps, args)
	if err != nil {
		return nil, nil, translate(err)
	}
	apps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (catalog.App, error) { return scanApp(r) })
	if err != nil {
		return nil, nil, translate(err)
	}
	rows, err = q.Query(ctx, qCatalogListActions, args)
	if err != nil {
		return nil, nil, translate(err)
	}
	actions, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (driver.CatalogActionRow, error) {
		var row driver.CatalogActionRow
		var o catalog.Overrides
		if err := r.Scan(append([]any{&row.AppKey, &row.Action.Key}, actionDest(&row.Action, &o)...)...); err != nil {
			return row, err
		}
		return row, applyAction(&row.Action, o)
	})
	if err != nil {
		return nil, nil, translate(err)
	}
	return apps, actions, nil
}

// scanApp reads the 17 app columns of catalog_list_apps and catalog_resolve.
func scanApp(r pgx.Row, more ...any) (catalog.App, error) {
	var a catalog.App
	var timeoutMS, backoffMS int64
	var limits limitCols
	var pinned pinCols
	dest := append([]any{&a.Workspace, &a.Key, &a.SourceID, &a.CommitSHA, &a.Entrypoint, &a.Runtime,
		&timeoutMS, &a.Tag, &a.Retry.MaxAttempts, &backoffMS, &a.Retry.Factor,
		&limits.memory, &limits.pids, &limits.cpu, &pinned.env, &pinned.warm, &a.UpdatedAt}, more...)
	if err := r.Scan(dest...); err != nil {
		return a, err
	}
	a.Timeout = time.Duration(timeoutMS) * time.Millisecond
	a.Retry.Backoff = time.Duration(backoffMS) * time.Millisecond
	a.Limits = limits.limits()
	var p spine.Pin
	if err := pinned.apply(&p); err != nil {
		return a, fmt.Errorf("app %s: %w", a.Key, err)
	}
	a.Env, a.Warm = p.Env, p.Warm
	return a, nil
}

// actionDest are the scan targets of an action's schema and override
// columns, in the order catalog_list_actions and catalog_resolve give them.
func actionDest(a *catalog.Action, o *catalog.Overrides) []any {
	return []any{&a.InputSchema, &a.OutputSchema,
		&o.TimeoutMS, &o.Tag, &o.MaxAttempts, &o.BackoffMS, &o.BackoffFactor,
		&o.LimitMemory, &o.LimitPids, &o.LimitCPU, &o.Env, &o.Warm}
}

// applyAction finishes a scanned action: the catalog's override rule, and
// the schemas compacted (jsonb re-spaces them) as SQLite keeps them.
func applyAction(a *catalog.Action, o catalog.Overrides) error {
	a.InputSchema, a.OutputSchema = compactJSON(a.InputSchema), compactJSON(a.OutputSchema)
	return o.Apply(a)
}
