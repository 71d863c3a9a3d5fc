// Package metrics exposes windforce to Prometheus.
//
// Two kinds of figures live here:
//
//   - Queue gauges (windforce_queue_*) are read from the database at scrape
//     time (spine.Store.Health, the queue_health view), never kept in
//     memory, so every server and worker that serves /metrics shows the
//     same truth however many of them run.
//   - Process counters (jobs enqueued, syncs, zombies reaped, jobs claimed
//     and completed, run time) count what this one process did; Prometheus
//     sums them across processes.
//
// A Metrics value owns its own registry (never the global default), so
// tests and embedders can build as many as they like. Serve Handler() on
// /metrics; wire the hooks: server.Config.Metrics counts enqueues,
// spine.Reaper.OnReap = m.Reaped, m.SyncDone after each source sync, and
// spine.WorkerConfig.Handler = m.Instrument(handler) on workers.
package metrics
