// Package postgres is the Postgres driver (driver.Driver) under the store
// core, through pgx v5: many servers and workers on many machines share one
// database.
//
// How each promise is kept:
//
//	enqueue    one statement: job_queue row (ON CONFLICT on the coalesce
//	           index) + job row + pg_notify, so a wake-up is sent only on
//	           commit; the core's EnqueueTx runs it in the caller's
//	           transaction (TxExecutor)
//	claim      one statement: a MATERIALIZED CTE picks rows FOR UPDATE SKIP
//	           LOCKED through job_queue_claim, UPDATE … FROM it sets the
//	           owner and a fresh claim token, a second CTE writes the ping
//	heartbeat  one statement over unnest(ids, tokens): renews the ping of
//	           leases still owned, returns their cancel mark
//	complete   one statement: fenced DELETE … RETURNING feeds the
//	           job_completed INSERT and the job_runtime DELETE, and
//	           pg_notify wakes the job's waiters on commit
//	reap       one transaction: lock stale rows FOR UPDATE OF job_queue
//	           SKIP LOCKED, then writes that repeat the whole guard
//	wake-ups   NOTIFY on "windforce_job[_schema]" with the tag as payload
//	           (workers), and on "windforce_done[_schema]" with the ids of
//	           the jobs a transaction finished, 200 a notification, from
//	           every statement that writes job_completed (waiters); one
//	           listener connection per Driver LISTENs on both and feeds
//	           spine.Wakeups and spine.Completions
//
// The SQL is in queries/, one file per query, each with a comment saying
// what it guarantees; the schema is in migrations/. Every operation is
// bounded by Options.QueryTimeout.
package postgres
