// Package spine is windforce's durable job queue: the one path every job
// takes from enqueue to a terminal status, on Postgres or SQLite.
//
// The life of a job:
//
//	           Enqueue (one transaction: job + job_queue + wake-up)
//	              │
//	              ▼
//	   ┌──────► waiting ◄──────────────┐ Fail with attempts left
//	   │          │ Claim              │ (attempt+1, scheduled_for = now + backoff)
//	   │          ▼                    │
//	   │       running ── Heartbeat ───┤ (fenced on claim_token, returns cancel mark)
//	   │       │  │  │                 │
//	   │ Reap  │  │  └─ Fail ──────────┘
//	   │(dead, │  │
//	   │ under │  └──── Complete / Fail (last attempt) / cancel seen ──► success │ failure │ canceled
//	   │ limit)│                                                               (job_completed)
//	   └───────┘ Reap past the restart limit ──► failure; Reap of a canceled job ──► canceled
//
//	Cancel:  waiting ──► canceled at once; running ──► marked, the worker finishes it canceled.
//	Reopen:  failure (or canceled with force) ──► waiting, same id, same pin, audited.
//	Sweep:   finished jobs older than the retention are deleted in bounded batches.
//
// Store is implemented once, by the store core (package store), over a
// thin driver per database (store/postgres, store/sqlite); spine/storetest
// is the suite of every invariant, run over the core on each driver. The
// Worker, Reaper and Sweeper in this package are the services built on a
// Store, each with the same Start/Stop lifecycle and a Clock (see Clock).
//
// Every store operation takes an explicit Now. A zero Now means "the
// database's clock" (Postgres) or the process clock (SQLite); tests pass a
// fake clock so retries, leases and the reaper run without sleeping.
package spine
