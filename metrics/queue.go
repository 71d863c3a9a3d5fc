package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/windforce/windforce/spine"
)

// HealthSource reads the queue_health view; spine.Store implements it.
type HealthSource interface {
	Health(ctx context.Context) ([]spine.TagHealth, error)
}

// queueGauge is one column of queue_health exported as a gauge.
type queueGauge struct {
	desc  *prometheus.Desc
	value func(spine.TagHealth) float64
}

// queueCollector reads the database on every scrape: the figures are the
// queue's, not this process's, so they must not be cached or counted here.
type queueCollector struct {
	src     HealthSource
	timeout time.Duration
	log     *slog.Logger
	up      *prometheus.Desc
	gauges  []queueGauge
}

func newQueueCollector(src HealthSource, timeout time.Duration, log *slog.Logger) *queueCollector {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	labels := []string{"workspace", "tag"}
	gauge := func(name, help string, v func(spine.TagHealth) float64) queueGauge {
		return queueGauge{desc: prometheus.NewDesc("windforce_queue_"+name, help, labels, nil), value: v}
	}
	return &queueCollector{src: src, timeout: timeout, log: log,
		up: prometheus.NewDesc("windforce_queue_health_up",
			"1 when the last scrape read the queue health from the database, 0 when the read failed.", nil, nil),
		gauges: []queueGauge{
			gauge("waiting", "Jobs waiting to be claimed now.", func(h spine.TagHealth) float64 { return float64(h.Waiting) }),
			gauge("scheduled", "Jobs waiting for a future scheduled_for.", func(h spine.TagHealth) float64 { return float64(h.Scheduled) }),
			gauge("running", "Jobs claimed by a worker.", func(h spine.TagHealth) float64 { return float64(h.Running) }),
			gauge("expired_heartbeats", "Running jobs whose heartbeat is older than the zombie timeout.",
				func(h spine.TagHealth) float64 { return float64(h.ExpiredHeartbeats) }),
			gauge("failed_24h", "Jobs that ended in failure in the last 24 hours.", func(h spine.TagHealth) float64 { return float64(h.Failed24h) }),
			gauge("oldest_waiting_seconds", "Age of the oldest waiting job.",
				func(h spine.TagHealth) float64 { return h.OldestWaitingAge.Seconds() }),
			gauge("max_attempt", "Highest attempt number among live jobs.", func(h spine.TagHealth) float64 { return float64(h.MaxAttempt) }),
			gauge("max_restarts", "Highest restart count among live jobs.", func(h spine.TagHealth) float64 { return float64(h.MaxRestarts) }),
		},
	}
}

// Describe sends every descriptor the collector may produce.
func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.up
	for _, g := range c.gauges {
		ch <- g.desc
	}
}

// Collect reads queue_health once and sends one sample per column, per
// workspace and tag. A failed read reports up=0 and no queue samples
// rather than stale or zero figures that would look healthy.
func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	rows, err := c.src.Health(ctx)
	if err != nil {
		c.log.Warn("metrics: read queue health", "err", err)
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
	for _, h := range rows {
		for _, g := range c.gauges {
			ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, g.value(h), h.Workspace, h.Tag)
		}
	}
}
