package cli

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/windforce/windforce/metrics"
	"github.com/windforce/windforce/runner"
)

// watchWarm exposes the runner's warm pool (DESIGN §7) as gauges on the
// process's /metrics: how many warm processes it holds, how many serve a
// job, and their memory.
func watchWarm(m *metrics.Metrics, r *runner.Runner) {
	gauge := func(name, help string, v func(runner.WarmStats) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help},
			func() float64 { return v(r.WarmStats()) })
	}
	m.Registry().MustRegister(
		gauge("windforce_warm_processes", "Warm runtime processes this worker holds (idle and busy).",
			func(s runner.WarmStats) float64 { return float64(s.Processes) }),
		gauge("windforce_warm_processes_busy", "Warm runtime processes serving a job now.",
			func(s runner.WarmStats) float64 { return float64(s.Busy) }),
		gauge("windforce_warm_memory_bytes", "Memory of every warm runtime process together (their cgroups).",
			func(s runner.WarmStats) float64 { return float64(s.Memory) }),
	)
}

// warmLine is the start line about the warm pool.
func warmLine(r *runner.Runner) string {
	s := r.WarmStats()
	return fmt.Sprintf("warm runtimes: %d processes held (%d busy, up to %d: one per slot); /readyz and windforce_warm_processes show them live", s.Processes, s.Busy, s.Max)
}

// warmReady is the warm pool as /readyz shows it.
func warmReady(r *runner.Runner) func() any {
	return func() any {
		s := r.WarmStats()
		return map[string]any{"processes": s.Processes, "busy": s.Busy, "max": s.Max, "memory_bytes": s.Memory}
	}
}
