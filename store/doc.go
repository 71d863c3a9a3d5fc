// Package store is the store core: every rule of the queue spine, the
// catalog, schedules, tokens and webhooks written once, over a thin driver
// per database.
//
//	server · console · scheduler · worker · CLI
//	       │  spine.Store, catalog.Store, schedule.Store, auth.Store,
//	       │  server.WebhookStore (checked at compile time, internal/cli/stores.go)
//	       ▼
//	┌────────────────────────── store.Store (this package) ───────────────────────────┐
//	│ enqueue: resolve → validate → pin → insert → wake-up (one path, one transaction) │
//	│ claim · heartbeat · complete · fail · release   (fenced on the claim token)      │
//	│ cancel · reopen · requeue · reap · sweep        (spine/rules.go, reaprule.go)    │
//	│ schedule ticks · catalog sync · webhook replay ledger · tokens · sessions        │
//	└───────────────┬───────────────────────────────────────────────┬──────────────────┘
//	                │ driver.Executor: one operation = one .sql file │ Tx (savepoints)
//	                ▼                                               ▼
//	store/postgres: pgx v5 pool, FOR UPDATE       store/sqlite: modernc.org/sqlite, one writer
//	SKIP LOCKED, LISTEN/NOTIFY, advisory locks    (BEGIN IMMEDIATE), WAL readers, in-process
//	many servers and workers on many machines     wake-ups after commit; one process per file
//
// A driver is SQL, error translation (to spine.ErrNotFound, ErrConflict,
// ErrNotOwner …) and transactions; it holds no rule. The core decides which
// operations run, in which transaction and with which message, so the two
// databases cannot drift apart. store/migrate is the embedded, numbered
// migration loader both drivers use.
//
// Open picks a driver by URL and builds the core over it; New builds it
// over a driver a caller opened (tests, a library user's own pool). A
// library caller that holds its own transaction hands the core an executor
// on it (postgres.Driver.TxExecutor; sqlite.Driver.WithTx), so its own
// writes and the job commit together.
//
// Tests: spine/storetest (every invariant of DESIGN §2), catalogtest,
// scheduletest and authtest run over the core on both drivers
// (conformance_test.go); store/driver/drivertest checks each driver
// operation on both databases.
package store
