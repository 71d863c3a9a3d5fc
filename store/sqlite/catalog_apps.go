package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// CatalogApplyLock proves the source exists; the one writer already
// serializes applies (driver.CatalogExecutor).
func (e *executor) CatalogApplyLock(ctx context.Context, workspace, id string) error {
	return e.write(ctx, func(w *writeTx) error {
		var got string
		err := w.queryRow(ctx, qCatalogApplyLock, sql.Named("workspace", workspace), sql.Named("id", id)).Scan(&got)
		if errNoRows(err) {
			return catalog.ErrNotFound
		}
		return err
	})
}

// CatalogAppOwners returns those of keys another source of the workspace
// provides (driver.CatalogExecutor).
func (e *executor) CatalogAppOwners(ctx context.Context, workspace, sourceID string, keys []string) ([]driver.CatalogAppOwner, error) {
	keysJSON, err := stringsJSON(keys)
	if err != nil {
		return nil, err
	}
	var owners []driver.CatalogAppOwner
	err = e.write(ctx, func(w *writeTx) error {
		rows, err := w.query(ctx, qCatalogAppOwners, sql.Named("workspace", workspace),
			sql.Named("source_id", sourceID), sql.Named("keys", keysJSON))
		if err != nil {
			return err
		}
		owners, err = collect(rows, func(r *sql.Rows) (driver.CatalogAppOwner, error) {
			var o driver.CatalogAppOwner
			err := r.Scan(&o.AppKey, &o.SourceID)
			return o, err
		})
		return err
	})
	return owners, err
}

// CatalogDeleteApps deletes the source's actions, then its apps (SQLite
// has no cascade here) (driver.CatalogExecutor).
func (e *executor) CatalogDeleteApps(ctx context.Context, workspace, sourceID string) error {
	return e.write(ctx, func(w *writeTx) error {
		ws, src := sql.Named("workspace", workspace), sql.Named("source_id", sourceID)
		if _, err := w.exec(ctx, qCatalogDeleteActions, ws, src); err != nil {
			return translate(err)
		}
		_, err := w.exec(ctx, qCatalogDeleteApps, ws, src)
		return translate(err)
	})
}

// CatalogInsertApps inserts the commit's apps and actions, one statement
// each on the writer (driver.CatalogExecutor).
func (e *executor) CatalogInsertApps(ctx context.Context, p catalog.SyncParams) error {
	if len(p.Apps) == 0 {
		return nil
	}
	return e.write(ctx, func(w *writeTx) error {
		now := micros(w.now(p.Now))
		for _, app := range p.Apps {
			if err := w.insertApp(ctx, p, app, now); err != nil {
				return err
			}
		}
		return nil
	})
}

func (w *writeTx) insertApp(ctx context.Context, p catalog.SyncParams, app catalog.App, now int64) error {
	if _, err := w.exec(ctx, qCatalogInsertApp, append([]any{
		sql.Named("workspace", p.Workspace), sql.Named("app_key", app.Key),
		sql.Named("source_id", p.SourceID), sql.Named("commit_sha", p.Commit),
		sql.Named("entrypoint", app.Entrypoint), sql.Named("runtime", app.Runtime),
		sql.Named("timeout_ms", durationMS(app.Timeout)), sql.Named("tag", app.Tag),
		sql.Named("max_attempts", app.Retry.MaxAttempts), sql.Named("backoff_ms", durationMS(app.Retry.Backoff)),
		sql.Named("backoff_factor", app.Retry.Factor), sql.Named("now", now),
	}, append(limitArgs(app.Limits), sql.Named("env", textPtrArg(spine.EnvColumn(app.Env))),
		sql.Named("warm", textPtrArg(spine.WarmColumn(app.Warm))))...)...); err != nil {
		return translate(err)
	}
	for _, a := range app.Actions {
		o := catalog.OverridesOf(a)
		if _, err := w.exec(ctx, qCatalogInsertAction,
			sql.Named("workspace", p.Workspace), sql.Named("app_key", app.Key), sql.Named("action_key", a.Key),
			sql.Named("input_schema", jsonArg(a.InputSchema)), sql.Named("output_schema", jsonArg(a.OutputSchema)),
			sql.Named("timeout_ms", o.TimeoutMS), sql.Named("tag", o.Tag),
			sql.Named("max_attempts", o.MaxAttempts), sql.Named("backoff_ms", o.BackoffMS),
			sql.Named("backoff_factor", o.BackoffFactor), sql.Named("limit_memory", o.LimitMemory),
			sql.Named("limit_pids", o.LimitPids), sql.Named("limit_cpu", o.LimitCPU),
			sql.Named("env", textPtrArg(o.Env)), sql.Named("warm", textPtrArg(o.Warm))); err != nil {
			return translate(err)
		}
	}
	return nil
}

// CatalogSourceSynced records the source's new commit and clears its
// error (driver.CatalogExecutor).
func (e *executor) CatalogSourceSynced(ctx context.Context, workspace, id, commit string, now time.Time) error {
	return e.write(ctx, func(w *writeTx) error {
		_, err := w.exec(ctx, qCatalogSourceSynced, sql.Named("workspace", workspace), sql.Named("id", id),
			sql.Named("commit_sha", commit), sql.Named("now", micros(w.now(now))))
		return translate(err)
	})
}

// CatalogListApps reads apps and their actions in one read transaction on
// the reader pool (one WAL snapshot), so a sync in between cannot mix two
// commits; inside a write transaction both reads go through it
// (driver.CatalogExecutor).
func (e *executor) CatalogListApps(ctx context.Context, workspace, appKey string) ([]catalog.App, []driver.CatalogActionRow, error) {
	run := func(q query, args ...any) (*sql.Rows, error) { return e.w.query(ctx, q, args...) }
	if e.w == nil {
		tx, err := e.d.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return nil, nil, err
		}
		defer tx.Rollback() //nolint:errcheck // read-only
		run = func(q query, args ...any) (*sql.Rows, error) { return tx.QueryContext(ctx, sqlOf(q), args...) }
	}
	args := []any{sql.Named("workspace", workspace), sql.Named("app_key", appKey)}
	rows, err := run(qCatalogListApps, args...)
	if err != nil {
		return nil, nil, err
	}
	apps, err := collect(rows, func(r *sql.Rows) (catalog.App, error) { return scanApp(r) })
	if err != nil {
		return nil, nil, err
	}
	rows, err = run(qCatalogListActions, args...)
	if err != nil {
		return nil, nil, err
	}
	actions, err := collect(rows, func(r *sql.Rows) (driver.CatalogActionRow, error) {
		var row driver.CatalogActionRow
		var c actionCols
		if err := r.Scan(&row.AppKey, &row.Action.Key, &c.input, &c.output,
			&c.timeoutMS, &c.tag, &c.maxAttempts, &c.backoffMS, &c.factor,
			&c.memory, &c.pids, &c.cpu, &c.env, &c.warm); err != nil {
			return row, err
		}
		return row, c.apply(&row.Action)
	})
	if err != nil {
		return nil, nil, err
	}
	return apps, actions, nil
}

// scanApp reads the 17 app columns of catalog_list_apps and catalog_resolve.
func scanApp(r rowScanner, more ...any) (catalog.App, error) {
	var a catalog.App
	var timeoutMS, backoffMS, updatedAt int64
	var limits limitCols
	var pinned pinCols
	dest := append([]any{&a.Workspace, &a.Key, &a.SourceID, &a.CommitSHA, &a.Entrypoint, &a.Runtime,
		&timeoutMS, &a.Tag, &a.Retry.MaxAttempts, &backoffMS, &a.Retry.Factor,
		&limits.memory, &limits.pids, &limits.cpu, &pinned.env, &pinned.warm, &updatedAt}, more...)
	if err := r.Scan(dest...); err != nil {
		return a, err
	}
	a.Timeout = time.Duration(timeoutMS) * time.Millisecond
	a.Retry.Backoff = time.Duration(backoffMS) * time.Millisecond
	a.UpdatedAt = fromMicros(updatedAt)
	a.Limits = limits.limits()
	var p spine.Pin
	if err := pinned.apply(&p); err != nil {
		return a, fmt.Errorf("app %s: %w", a.Key, err)
	}
	a.Env, a.Warm = p.Env, p.Warm
	return a, nil
}

// actionCols receive an action's schema and nullable override columns, as
// catalog_list_actions and catalog_resolve give them.
type actionCols struct {
	input, output        sql.NullString
	timeoutMS, backoffMS sql.Null[int64]
	tag                  sql.Null[string]
	maxAttempts          sql.Null[int]
	factor               sql.Null[float64]
	memory               sql.Null[int64]
	pids                 sql.Null[int]
	cpu                  sql.Null[float64]
	env, warm            sql.Null[string]
}

// apply sets a's schemas and, through the catalog's override rule, its
// overrides.
func (c *actionCols) apply(a *catalog.Action) error {
	a.InputSchema, a.OutputSchema = nullJSON(c.input), nullJSON(c.output)
	o := catalog.Overrides{
		TimeoutMS: ptr(c.timeoutMS), Tag: ptr(c.tag),
		MaxAttempts: ptr(c.maxAttempts), BackoffMS: ptr(c.backoffMS), BackoffFactor: ptr(c.factor),
		LimitMemory: ptr(c.memory), LimitPids: ptr(c.pids), LimitCPU: ptr(c.cpu),
		Env: ptr(c.env), Warm: ptr(c.warm),
	}
	return o.Apply(a)
}

// ptr is a nullable column as the pointer an override takes (nil: NULL).
func ptr[T any](n sql.Null[T]) *T {
	if !n.Valid {
		return nil
	}
	return &n.V
}
