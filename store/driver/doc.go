// Package driver is the seam between the store core (package store) and
// one database (store/postgres, store/sqlite).
//
// A driver is SQL, error translation and transactions, nothing more: each
// operation of an Executor runs one statement from the driver's queries/
// folder (or a short fixed sequence), named like its SQL file, and answers
// in the spine's types and typed errors. Which operations run, in which
// transaction, with which rule and message, is the core's business and is
// written once there.
//
//	store (core)  ── enqueue, claim/complete/fail rules, reaper, schedules,
//	     │            catalog sync, webhook ledger, tokens
//	     │ driver.Executor (compile-time interface)
//	     ├── store/postgres: pgx pool, LISTEN/NOTIFY, advisory locks
//	     └── store/sqlite:   one writer connection, readers, in-process wake-ups
//
// Executor.Tx opens a transaction (a savepoint inside one). A library caller
// who holds its own transaction gets an Executor on it from the driver
// (postgres.Driver.TxExecutor; on SQLite preferably sqlite.Driver.WithTx,
// which wakes workers only after the commit, or sqlite.Driver.TxExecutor)
// and passes it to the core's *Tx methods.
//
// drivertest is the conformance suite of the operations, run on every
// driver; spine/storetest checks the invariants over the core.
package driver
