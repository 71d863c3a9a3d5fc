// Package bench measures the queue spine with no-op jobs: throughput
// (continuous, with a backlog kept topped up, or burning down a queue
// filled beforehand), pickup latency on an idle queue, claim latency at
// depth, and the worker's memory.
//
// The harness drives a System, so the same measurements run against
// windforce (NewWindforce, on Postgres or SQLite) and, from the separate
// bench/compare module, against River: same worker count, same no-op job,
// same duration, each in a fresh schema or file of its own.
//
// Run prints a progress line while it runs and returns a Result; the
// command prints that Result as one JSON object on its last line, so
// scripts can compare runs.
package bench
