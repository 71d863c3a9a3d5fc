package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// ApplySync replaces the source's apps and actions in one transaction on
// the one writer.
func (s *Driver) ApplySync(ctx context.Context, p catalog.SyncParams) error {
	err := s.write(ctx, func(w *writeTx) error { return w.applySync(ctx, p) })
	if err != nil {
		return fmt.Errorf("apply sync of %s/%s at %s: %w", p.Workspace, p.SourceID, p.Commit, err)
	}
	return nil
}

func (w *writeTx) applySync(ctx context.Context, p catalog.SyncParams) error {
	ws, src := sql.Named("workspace", p.Workspace), sql.Named("source_id", p.SourceID)
	var id string
	if err := w.queryRow(ctx, qCatalogSourceExists, ws, sql.Named("id", p.SourceID)).Scan(&id); errNoRows(err) {
		return fmt.Errorf("%w: source %q in workspace %q", catalog.ErrNotFound, p.SourceID, p.Workspace)
	} else if err != nil {
		return fmt.Errorf("read source: %w", err)
	}
	if err := w.checkOwners(ctx, p); err != nil {
		return err
	}
	if _, err := w.exec(ctx, qCatalogDeleteActions, ws, src); err != nil {
		return fmt.Errorf("delete old actions: %w", err)
	}
	if _, err := w.exec(ctx, qCatalogDeleteApps, ws, src); err != nil {
		return fmt.Errorf("delete old apps: %w", err)
	}
	now := micros(resolveNow(p.Now))
	for _, app := range p.Apps {
		if err := w.insertApp(ctx, p, app, now); err != nil {
			return err
		}
	}
	if _, err := w.exec(ctx, qCatalogSourceSynced, ws, sql.Named("id", p.SourceID),
		sql.Named("commit_sha", p.Commit), sql.Named("now", now)); err != nil {
		return fmt.Errorf("record commit: %w", translate(err))
	}
	return nil
}

// checkOwners refuses app keys another source of the workspace provides.
func (w *writeTx) checkOwners(ctx context.Context, p catalog.SyncParams) error {
	keys := make([]string, len(p.Apps))
	for i, a := range p.Apps {
		keys[i] = a.Key
	}
	keysJSON, err := stringsJSON(keys)
	if err != nil {
		return err
	}
	rows, err := w.query(ctx, qCatalogAppOwners, sql.Named("workspace", p.Workspace),
		sql.Named("source_id", p.SourceID), sql.Named("keys", keysJSON))
	if err != nil {
		return fmt.Errorf("check app owners: %w", err)
	}
	owned, err := collect(rows, func(r *sql.Rows) (string, error) {
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

func (w *writeTx) insertApp(ctx context.Context, p catalog.SyncParams, app catalog.App, now int64) error {
	if _, err := w.exec(ctx, qCatalogInsertApp, append([]any{
		sql.Named("workspace", p.Workspace), sql.Named("app_key", app.Key),
		sql.Named("source_id", p.SourceID), sql.Named("commit_sha", p.Commit),
		sql.Named("entrypoint", app.Entrypoint), sql.Named("runtime", app.Runtime),
		sql.Named("timeout_ms", durationMS(app.Timeout)), sql.Named("tag", app.Tag),
		sql.Named("max_attempts", app.Retry.MaxAttempts), sql.Named("backoff_ms", durationMS(app.Retry.Backoff)),
		sql.Named("backoff_factor", app.Retry.Factor), sql.Named("now", now),
	}, limitArgs(app.Limits)...)...); err != nil {
		return fmt.Errorf("insert app %s: %w", app.Key, translate(err))
	}
	for _, a := range app.Actions {
		var timeout, maxAttempts, backoff, factor any
		if a.Timeout > 0 {
			timeout = durationMS(a.Timeout)
		}
		if r := a.Retry; r != nil {
			maxAttempts, backoff, factor = r.MaxAttempts, durationMS(r.Backoff), r.Factor
		}
		if _, err := w.exec(ctx, qCatalogInsertAction, append([]any{
			sql.Named("workspace", p.Workspace), sql.Named("app_key", app.Key), sql.Named("action_key", a.Key),
			sql.Named("input_schema", jsonArg(a.InputSchema)), sql.Named("output_schema", jsonArg(a.OutputSchema)),
			sql.Named("timeout_ms", timeout), sql.Named("tag", textArg(a.Tag)),
			sql.Named("max_attempts", maxAttempts), sql.Named("backoff_ms", backoff), sql.Named("backoff_factor", factor),
		}, limitArgs(a.Limits)...)...); err != nil {
			return fmt.Errorf("insert action %s/%s: %w", app.Key, a.Key, translate(err))
		}
	}
	return nil
}

// ListApps returns a workspace's apps with their actions.
func (s *Driver) ListApps(ctx context.Context, workspace string) ([]catalog.App, error) {
	apps, err := s.readApps(ctx, workspace, "")
	if err != nil {
		return nil, fmt.Errorf("list apps of %s: %w", workspace, err)
	}
	return apps, nil
}

// GetApp returns one app with its actions; catalog.ErrNotFound if missing.
func (s *Driver) GetApp(ctx context.Context, workspace, key string) (catalog.App, error) {
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

// readApps reads apps and their actions in one read transaction (one WAL
// snapshot), so a sync in between cannot mix two commits.
func (s *Driver) readApps(ctx context.Context, workspace, appKey string) ([]catalog.App, error) {
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	args := []any{sql.Named("workspace", workspace), sql.Named("app_key", appKey)}
	rows, err := tx.QueryContext(ctx, sqlOf(qCatalogListApps), args...)
	if err != nil {
		return nil, err
	}
	apps, err := collect(rows, func(r *sql.Rows) (catalog.App, error) { return scanApp(r) })
	if err != nil {
		return nil, err
	}
	index := map[string]int{}
	for i, a := range apps {
		index[a.Key] = i
	}
	rows, err = tx.QueryContext(ctx, sqlOf(qCatalogListActions), args...)
	if err != nil {
		return nil, err
	}
	_, err = collect(rows, func(r *sql.Rows) (struct{}, error) {
		var appKey, actionKey sql.NullString
		var a catalog.Action
		var o overrides
		if err := r.Scan(&appKey, &actionKey, &o.input, &o.output,
			&o.timeoutMS, &o.tag, &o.maxAttempts, &o.backoffMS, &o.factor,
			&o.limits.memory, &o.limits.pids, &o.limits.cpu); err != nil {
			return struct{}{}, err
		}
		a.Key = actionKey.String
		o.apply(&a)
		if i, ok := index[appKey.String]; ok {
			apps[i].Actions = append(apps[i].Actions, a)
		}
		return struct{}{}, nil
	})
	return apps, err
}

// scanApp reads the 15 app columns of catalog_list_apps and catalog_resolve.
func scanApp(r rowScanner, more ...any) (catalog.App, error) {
	var a catalog.App
	var timeoutMS, backoffMS, updatedAt int64
	var limits limitCols
	dest := append([]any{&a.Workspace, &a.Key, &a.SourceID, &a.CommitSHA, &a.Entrypoint, &a.Runtime,
		&timeoutMS, &a.Tag, &a.Retry.MaxAttempts, &backoffMS, &a.Retry.Factor,
		&limits.memory, &limits.pids, &limits.cpu, &updatedAt}, more...)
	if err := r.Scan(dest...); err != nil {
		return a, err
	}
	a.Timeout = time.Duration(timeoutMS) * time.Millisecond
	a.Retry.Backoff = time.Duration(backoffMS) * time.Millisecond
	a.UpdatedAt = fromMicros(updatedAt)
	a.Limits = limits.limits()
	return a, nil
}

// overrides are an action's schema and nullable override columns.
type overrides struct {
	input, output        sql.NullString
	timeoutMS, backoffMS sql.NullInt64
	tag                  sql.NullString
	maxAttempts          sql.NullInt64
	factor               sql.NullFloat64
	limits               limitCols
}

func (o overrides) apply(a *catalog.Action) {
	a.InputSchema, a.OutputSchema = nullJSON(o.input), nullJSON(o.output)
	if o.timeoutMS.Valid {
		a.Timeout = time.Duration(o.timeoutMS.Int64) * time.Millisecond
	}
	a.Tag = o.tag.String
	if o.maxAttempts.Valid && o.backoffMS.Valid && o.factor.Valid {
		a.Retry = &spine.RetryPolicy{
			MaxAttempts: int(o.maxAttempts.Int64),
			Backoff:     time.Duration(o.backoffMS.Int64) * time.Millisecond,
			Factor:      o.factor.Float64,
		}
	}
	a.Limits = o.limits.limits()
}
