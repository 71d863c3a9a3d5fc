package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/google/uuid"
)

//go:embed queries/*.sql
var queryFS embed.FS

// query names one embedded SQL file in queries/ (without ".sql").
type query string

// Statements on the writer connection.
const (
	qEnqueueInsertJob     query = "enqueue_insert_job"
	qEnqueueInsertQueue   query = "enqueue_insert_queue"
	qEnqueueCoalesce      query = "enqueue_coalesce"
	qEnqueueCoalesceInput query = "enqueue_coalesce_input"
	qEnqueueRelease       query = "enqueue_coalesce_release"
	qClaim                query = "claim"
	qClaimPing            query = "claim_ping"
	qClaimJobs            query = "claim_jobs"
	qHeartbeat            query = "heartbeat"
	qFinish               query = "finish"
	qFinishInsert         query = "finish_insert"
	qFinishBatch          query = "finish_batch"
	qFinishBatchDelete    query = "finish_batch_delete"
	qRuntimeDelete        query = "runtime_delete"
	qRuntimeDeleteMany    query = "runtime_delete_many"
	qLockLease            query = "lock_lease"
	qRequeue              query = "requeue"
	qJobState             query = "job_state"
	qCancelWaiting        query = "cancel_waiting"
	qCancelMark           query = "cancel_mark"
	qAuditInsert          query = "audit_insert"
	qReopenDelete         query = "reopen_delete"
	qReapLock             query = "reap_lock"
	qReapRequeue          query = "reap_requeue"
	qReapFinish           query = "reap_finish"
	qReapDelete           query = "reap_delete"
	qSweep                query = "sweep"
	qSweepJob             query = "sweep_job"
	qSweepLogs            query = "sweep_logs"
	qSweepAudit           query = "sweep_audit"
	qSetZombieTimeout     query = "set_zombie_timeout"
	qAppendLog            query = "append_log"
	qSchemaUsedAt         query = "schema_used_at"
	qSchemaInsert         query = "schema_insert"
	qSchemaTouch          query = "schema_touch"
	qSweepSchemas         query = "sweep_schemas"
	qJobSetSecrets        query = "job_set_secrets"
)

// Statements on the reader pool.
const (
	qGetJob query = "get_job"
	qLogs   query = "logs"
	qAudit  query = "audit"
	qHealth query = "health"

	qDispatchedLease query = "dispatched_lease"
	qOwnedLeases     query = "owned_leases"
)

// Migration bookkeeping: run before the schema exists, never prepared.
const (
	qMigrateTable  query = "migrate_table"
	qMigrateRecord query = "migrate_record"
	qMigrateExists query = "migrate_exists"
	qSchemaVersion query = "schema_version"
)

var (
	writerQueries = []query{
		qEnqueueInsertJob, qEnqueueInsertQueue, qEnqueueCoalesce, qEnqueueCoalesceInput, qEnqueueRelease,
		qClaim, qClaimPing, qClaimJobs, qHeartbeat,
		qFinish, qFinishInsert, qFinishBatch, qFinishBatchDelete, qRuntimeDelete, qRuntimeDeleteMany,
		qLockLease, qRequeue,
		qJobState, qCancelWaiting, qCancelMark, qAuditInsert, qReopenDelete,
		qReapLock, qReapRequeue, qReapFinish, qReapDelete,
		qSweep, qSweepJob, qSweepLogs, qSweepAudit,
		qSetZombieTimeout, qAppendLog, qJobSetSecrets,
		qSchemaUsedAt, qSchemaInsert, qSchemaTouch, qSweepSchemas,
		qEventsJobs, qEventsJobWorkspaces, qEventsJobRow, qEventsRecorded, qEventsFinished, qEventsSource,
		qCatalogPutSource, qCatalogSyncError, qCatalogSetHookSecret, qCatalogApplyLock, qCatalogAppOwners,
		qCatalogDeleteActions, qCatalogDeleteApps, qCatalogInsertApp, qCatalogInsertAction,
		qCatalogSourceSynced, qCatalogResolve, qCatalogGetSource, qCatalogAppAtCommit,
		qAuthCreateToken, qAuthRevokeToken, qAuthEndSessions,
		qSessionDeleteExpired, qSessionInsert, qSessionEnd,
		qRequeueJobRead,
		qWebhookPutSecret, qWebhookForget, qWebhookSeen,
		qScheduleCreate, qScheduleSetEnabled, qScheduleDelete, qScheduleFire, qScheduleJobLive, qScheduleSetJob, qScheduleHandOver,
		qSecretNextVersion, qSecretInsert, qSecretReplace, qSecretDelete, qSecretAuditInsert, qSecretRotateBatch, qSecretReseal, qSecretsSealed,
		qSinkInsert, qSinkUpdate, qSinkDelete, qSinkDeleteDeliveries,
		qRelaySetCursor, qDeliveryInsert, qDeliveryClaimPick, qDeliveryClaimEvents, qDeliveryClaimLease, qDeliverySettle, qDeliveryRetryNow, qDeliverySweep, qOutboxSweep,
	}
	readerQueries = []query{
		qGetJob, qLogs, qAudit, qHealth, qDispatchedLease, qOwnedLeases, qClaimJobs,
		qCatalogGetSource, qCatalogListSources, qCatalogListApps, qCatalogListActions, qCatalogResolve, qCatalogAppCommits,
		qAuthTokenByHash, qAuthLeaseLive, qAuthTokenByID, qSessionByHash,
		qWebhookSecret,
		qListJobs, qCountJobs,
		qScheduleList, qScheduleGet, qScheduleDue,
		qEventsAfter, qEventsRecent,
		qSecretList, qSecretsSealed, qSecretAuditList, qSecretRotateBatch,
		qSinkList, qSinkGet, qDeliveryList, qDeliveryCounts, qOutboxLastSeq, qRelayCursor,
	}
	migrationQueries = []query{qMigrateTable, qMigrateRecord, qMigrateExists, qSchemaVersion}
)

// queryText holds every embedded query by name, loaded once at start.
var queryText = mustLoadQueries()

func mustLoadQueries() map[query]string {
	texts := map[query]string{}
	err := fs.WalkDir(queryFS, "queries", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := queryFS.ReadFile(p)
		if err != nil {
			return err
		}
		texts[query(strings.TrimSuffix(path.Base(p), ".sql"))] = string(b)
		return nil
	})
	if err != nil {
		panic(fmt.Sprintf("load embedded queries: %v", err))
	}
	return texts
}

// sqlOf returns a query's text. A missing file is a build mistake, caught
// by TestQueriesComplete.
func sqlOf(q query) string {
	t, ok := queryText[q]
	if !ok {
		panic(fmt.Sprintf("sqlite store: no embedded query %q", q))
	}
	return t
}

// prepared are the statements prepared once the schema is current: the
// writer's on its one connection, the readers' lazily on each reader.
type prepared struct {
	writer map[query]*sql.Stmt
	reader map[query]*sql.Stmt
}

func (p *prepared) close() error {
	var errs []error
	for _, st := range p.writer {
		errs = append(errs, st.Close())
	}
	for _, st := range p.reader {
		errs = append(errs, st.Close())
	}
	return errors.Join(errs...)
}

// prepareIfCurrent prepares the statements when the database is at the
// latest schema version. Before that, statements referring to tables that
// do not exist yet cannot be prepared; queries are then prepared per use.
//
// It must not run while a writer transaction is open in the same goroutine:
// preparing on the writer needs its one connection.
func (s *Driver) prepareIfCurrent(ctx context.Context) error {
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	if s.stmts.Load() != nil {
		return nil
	}
	current, latest, err := s.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if current != latest {
		return nil
	}
	p := &prepared{writer: map[query]*sql.Stmt{}, reader: map[query]*sql.Stmt{}}
	for _, set := range []struct {
		db  *sql.DB
		qs  []query
		out map[query]*sql.Stmt
	}{{s.writer, writerQueries, p.writer}, {s.reader, readerQueries, p.reader}} {
		for _, q := range set.qs {
			st, err := set.db.PrepareContext(ctx, sqlOf(q))
			if err != nil {
				return errors.Join(fmt.Errorf("prepare %s: %w", q, err), p.close())
			}
			set.out[q] = st
		}
	}
	s.stmts.Store(p)
	return nil
}

// writerExec runs a single autocommit statement on the writer.
func (s *Driver) writerExec(ctx context.Context, q query, args ...any) (sql.Result, error) {
	if p := s.stmts.Load(); p != nil {
		return p.writer[q].ExecContext(ctx, args...)
	}
	return s.writer.ExecContext(ctx, sqlOf(q), args...)
}

// writerQuery runs a single autocommit statement with rows on the writer.
func (s *Driver) writerQuery(ctx context.Context, q query, args ...any) (*sql.Rows, error) {
	if p := s.stmts.Load(); p != nil {
		return p.writer[q].QueryContext(ctx, args...)
	}
	return s.writer.QueryContext(ctx, sqlOf(q), args...)
}

// readerQuery runs a read on the reader pool.
func (s *Driver) readerQuery(ctx context.Context, q query, args ...any) (*sql.Rows, error) {
	if p := s.stmts.Load(); p != nil {
		return p.reader[q].QueryContext(ctx, args...)
	}
	return s.reader.QueryContext(ctx, sqlOf(q), args...)
}

// scanRows calls scan on every row and closes rows, so the next statement
// of a transaction starts with no cursor open.
func scanRows(rows *sql.Rows, scan func(*sql.Rows) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return rows.Close()
}

// collect reads every row with scan and closes rows, so the next statement
// of a transaction starts with no cursor open.
func collect[T any](rows *sql.Rows, scan func(*sql.Rows) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, rows.Close()
}

// scanID reads a row holding one job id.
func scanID(rows *sql.Rows) (uuid.UUID, error) {
	var id uuid.UUID
	return id, rows.Scan(&id)
}
