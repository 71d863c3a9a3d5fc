package metrics

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/spine"
)

// Options configure New.
type Options struct {
	// Health is read at every scrape for the queue gauges; nil leaves them
	// out (a process without a database).
	Health HealthSource
	// ScrapeTimeout bounds the database read of one scrape; default 5s.
	ScrapeTimeout time.Duration
	Logger        *slog.Logger
}

// Metrics is one process's set of windforce metrics on its own registry.
// All methods are safe for concurrent use; a nil *Metrics counts nothing.
type Metrics struct {
	reg *prometheus.Registry

	enqueued   *prometheus.CounterVec
	syncs      *prometheus.CounterVec
	reaped     *prometheus.CounterVec
	claimed    *prometheus.CounterVec
	completed  *prometheus.CounterVec
	runSeconds *prometheus.HistogramVec
}

// New builds the metrics, registers the queue collector when o.Health is
// set, and the Go runtime and process collectors.
func New(o Options) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		enqueued: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "windforce_jobs_enqueued_total",
			Help: "Jobs this server enqueued, by trigger kind and workspace.",
		}, []string{"trigger", "workspace"}),
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "windforce_sync_total",
			Help: "Source syncs this process ran, by result (success or failure).",
		}, []string{"result"}),
		reaped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "windforce_zombies_reaped_total",
			Help: "Jobs of dead workers this process's reaper handled, by outcome (requeued, failed, canceled).",
		}, []string{"outcome"}),
		claimed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "windforce_jobs_claimed_total",
			Help: "Jobs this worker claimed and started, by tag.",
		}, []string{"tag"}),
		completed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "windforce_jobs_completed_total",
			Help: "Job attempts this worker ran to an end, by outcome as the handler saw it " +
				"(success, failure, canceled, lost, released) and tag.",
		}, []string{"status", "tag"}),
		runSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "windforce_job_run_seconds",
			Help:    "Wall time of one job attempt in the handler, by tag.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600},
		}, []string{"tag"}),
	}
	m.reg.MustRegister(m.enqueued, m.syncs, m.reaped, m.claimed, m.completed, m.runSeconds,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if o.Health != nil {
		m.reg.MustRegister(newQueueCollector(o.Health, o.ScrapeTimeout, o.Logger))
	}
	return m
}

// Registry is the registry the metrics live on, for tests and for adding
// collectors of an embedding program.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus text format (GET /metrics).
// A failing queue read does not fail the scrape: the process counters are
// still served and windforce_queue_health_up reads 0.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, ErrorHandling: promhttp.ContinueOnError})
}

// JobEnqueued counts one job enqueued by this process.
func (m *Metrics) JobEnqueued(trigger spine.TriggerKind, workspace string) {
	if m == nil {
		return
	}
	m.enqueued.WithLabelValues(string(trigger), workspace).Inc()
}

// SyncDone counts one source sync: success when err is nil.
func (m *Metrics) SyncDone(err error) {
	if m == nil {
		return
	}
	result := "success"
	if err != nil {
		result = "failure"
	}
	m.syncs.WithLabelValues(result).Inc()
}

// Reaped counts a reaper pass's jobs; set spine.Reaper.OnReap to it.
func (m *Metrics) Reaped(res spine.ReapResult) {
	if m == nil {
		return
	}
	m.reaped.WithLabelValues("requeued").Add(float64(len(res.Requeued)))
	m.reaped.WithLabelValues("failed").Add(float64(len(res.Failed)))
	m.reaped.WithLabelValues("canceled").Add(float64(len(res.Canceled)))
}

// SchedulePass counts the jobs one scheduler pass enqueued, under trigger
// schedule: every tick it won that made a job. A tick no-overlap skipped,
// or whose action could not run, made none and is not counted. Set
// schedule.Scheduler.OnPass to it.
func (m *Metrics) SchedulePass(r schedule.PassResult) {
	for _, f := range r.Fired {
		if f.Job != uuid.Nil {
			m.JobEnqueued(spine.TriggerSchedule, f.Workspace)
		}
	}
}
