// Package sqlite is the SQLite driver (driver.Driver) under the store core:
// an embedded database for `windforce dev` and single-process deployments.
//
// Concurrency model:
//
//	                 ┌──────────── writer *sql.DB: exactly ONE connection ────────────┐
//	Enqueue, Claim,  │ _txlock=immediate: every transaction is BEGIN IMMEDIATE        │
//	Heartbeat, ...──►│ WAL, synchronous=FULL (acknowledged = durable), busy_timeout    │──► windforce.db
//	                 └─────────────────────────────────────────────────────────────────┘      (+ -wal)
//	                 ┌──────────── reader *sql.DB: a few query_only connections ───────┐
//	GetJob, Logs,  ──►│ WAL snapshots: readers never block the writer, nor it them     │──►
//	Audit, Health    └─────────────────────────────────────────────────────────────────┘
//
// Every write goes through the one writer connection, so writes are
// serialized in the process: a claim's UPDATE … RETURNING cannot race
// another claim, and the read-then-write steps of Fail, Cancel and Reap see
// the state they write to. BEGIN IMMEDIATE takes the write lock when the
// transaction starts, so a transaction never fails with SQLITE_BUSY halfway
// (a deferred transaction upgrading from read to write can, whatever the
// busy_timeout); the busy_timeout only matters for another process on the
// same file, such as `windforce migrate`.
//
// Wake-ups are in-process (spine.Wakeups, spine.Completions): a
// transaction collects the tags it made claimable and the jobs it
// finished, and after a successful commit wakes each tag's workers once
// and each job's waiters.
//
// A library caller writes its own rows and enqueues in one transaction
// with WithTx, which hands it the *sql.Tx and a driver.Executor on it for
// the core's EnqueueTx and EnqueueActionTx; the wake-ups go after the
// commit. Because there is one writer connection, code running inside
// WithTx must use only those two; calling another method that writes from
// inside it would wait forever for the connection the transaction holds.
//
// The store never runs ANALYZE: a queue's size swings, and statistics taken
// while it happened to be small would make the planner scan job_queue once
// it is deep. Without them SQLite's defaults walk the partial claim index.
//
// Types: ids and claim tokens are canonical UUID text, booleans are 0/1
// integers, timestamps are integer microseconds since the Unix epoch (UTC),
// durations are milliseconds, JSON is text checked with json_valid. SQL
// lives in migrations/ and queries/, one file per query, embedded.
package sqlite
