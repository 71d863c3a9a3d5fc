package postgres

import (
	"embed"
	"strings"
)

// The SQL lives in queries/, one file per query, named like the Go method
// that runs it; each file's leading comment says what it guarantees.
//
//go:embed queries/*.sql
var queryFiles embed.FS

// Queries, loaded once. A missing file panics at init, so a typo is found
// by the first test run rather than in production.
var (
	qEnqueue              = mustQuery("enqueue")
	qEnqueueCoalesce      = mustQuery("enqueue_coalesce")
	qEnqueueRelease       = mustQuery("enqueue_coalesce_release")
	qEnqueueBatch         = mustQuery("enqueue_batch")
	qNotify               = mustQuery("notify")
	qClaim                = mustQuery("claim")
	qHeartbeat            = mustQuery("heartbeat")
	qReadDispatched       = mustQuery("read_dispatched")
	qWithdrawOffer        = mustQuery("withdraw_offer")
	qOwnedLeases          = mustQuery("owned_leases")
	qComplete             = mustQuery("complete")
	qCompleteBatch        = mustQuery("complete_batch")
	qLockLease            = mustQuery("lock_lease")
	qLockLeases           = mustQuery("lock_leases")
	qRequeue              = mustQuery("requeue")
	qCancelLock           = mustQuery("cancel_lock")
	qCancelWaiting        = mustQuery("cancel_waiting")
	qCancelMark           = mustQuery("cancel_mark")
	qFinishedStatus       = mustQuery("finished_status")
	qLiveStatus           = mustQuery("live_status")
	qReopenLock           = mustQuery("reopen_lock")
	qReopen               = mustQuery("reopen")
	qReapLock             = mustQuery("reap_lock")
	qReapRequeue          = mustQuery("reap_requeue")
	qReapFinish           = mustQuery("reap_finish")
	qSweep                = mustQuery("sweep")
	qHealth               = mustQuery("health")
	qSetZombieTimeout     = mustQuery("set_zombie_timeout")
	qGetJob               = mustQuery("get_job")
	qAppendLog            = mustQuery("append_log")
	qJobSetSecrets        = mustQuery("job_set_secrets")
	qLogs                 = mustQuery("logs")
	qAudit                = mustQuery("audit")
	qMigrateLock          = mustQuery("migrate_lock")
	qMigrateInit          = mustQuery("migrate_init")
	qMigrateRecord        = mustQuery("migrate_record")
	qMigrationTableExists = mustQuery("migration_table_exists")
	qAppliedVersion       = mustQuery("applied_version")
)

func mustQuery(name string) string {
	b, err := queryFiles.ReadFile("queries/" + name + ".sql")
	if err != nil {
		panic("store/postgres: missing query " + name + ": " + err.Error())
	}
	return strings.TrimSpace(string(b))
}
