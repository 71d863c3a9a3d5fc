// Package schedule is the cron trigger (DESIGN §1, §4): schedules of an
// action with a fixed input, and the Scheduler service that fires their
// ticks through the one enqueue path.
//
//	every server: Scheduler pass (every 1s)
//	   DueSchedules(now) ──▶ for each: next = first tick after max(due tick, now)
//	   FireTick(s, next) ── one transaction ──────────────────────────────┐
//	     UPDATE schedule SET next_run_at = next                           │
//	       WHERE id = s.id AND next_run_at = s.due AND enabled            │
//	       0 rows: another server won the tick → nothing                  │
//	     no_overlap and last job still queued/running → skip (no job)     │
//	     EnqueueActionTx (trigger_kind schedule) ; last_job_id = job  ◀───┘
//
// The compare-and-set on (id, next_run_at) is the tick's unique key: of
// many servers only one fires it, and since the move and the enqueue
// commit together a crash neither loses nor doubles a tick. A tick missed
// while every server was down fires once, not once per missed tick. An
// action gone from the catalog (or an input its schema now refuses) still
// moves the tick, without a job, and is logged.
//
// Cron expressions have 5 fields (minute precision), 6 (leading seconds),
// or are descriptors (@hourly, @every 10m); they run in an IANA time zone,
// UTC by default. The package scheduletest is the stores' conformance suite.
package schedule
