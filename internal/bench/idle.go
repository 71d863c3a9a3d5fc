package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

// IdleResult is what an idle worker costs over a run: its resident memory
// and whether goroutines or database connections grew.
type IdleResult struct {
	System          string  `json:"system"`
	Mode            string  `json:"mode"`
	Database        string  `json:"database"`
	Workers         int     `json:"workers"`
	Seconds         float64 `json:"seconds"`
	RSSStartMiB     float64 `json:"rss_start_mib"`
	RSSEndMiB       float64 `json:"rss_end_mib"`
	PeakRSSMiB      float64 `json:"peak_rss_mib"`
	GoroutinesStart int     `json:"goroutines_start"`
	GoroutinesEnd   int     `json:"goroutines_end"`
	ConnsStart      int     `json:"conns_start"`
	ConnsEnd        int     `json:"conns_end"`
}

// Idle runs one worker on the empty queue for d (it polls and listens, as
// an idle worker does) and reports memory, goroutines and connections at
// the start (after a few seconds to settle) and at the end.
func Idle(ctx context.Context, w *Windforce, workers int, d time.Duration, progress io.Writer) (IdleResult, error) {
	if progress == nil {
		progress = io.Discard
	}
	res := IdleResult{System: "windforce", Mode: "idle", Database: w.Database(), Workers: workers}
	if err := w.Start(ctx, workers, func(time.Time) {}); err != nil {
		return res, fmt.Errorf("start worker: %w", err)
	}
	defer w.Stop(ctx) //nolint:errcheck
	const settle = 3 * time.Second
	select {
	case <-time.After(settle):
	case <-ctx.Done():
		return res, ctx.Err()
	}
	start := time.Now()
	res.RSSStartMiB, res.GoroutinesStart, res.ConnsStart = procStatusMiB("VmRSS"), runtime.NumGoroutine(), conns(w)
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	end := time.NewTimer(d)
	defer end.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-end.C:
			done = true
		case <-tick.C:
			fmt.Fprintf(progress, "idle %.0fs: rss %.1f MiB, %d goroutines, %d connections\n",
				time.Since(start).Seconds(), procStatusMiB("VmRSS"), runtime.NumGoroutine(), conns(w))
		}
	}
	res.Seconds = time.Since(start).Seconds()
	res.RSSEndMiB, res.GoroutinesEnd, res.ConnsEnd = procStatusMiB("VmRSS"), runtime.NumGoroutine(), conns(w)
	res.PeakRSSMiB = procStatusMiB("VmHWM")
	return res, nil
}

// conns counts the store's open database connections (the pool's; the
// Postgres listener's own connection is not in it).
func conns(w *Windforce) int {
	switch s := w.store.Driver().(type) {
	case *postgres.Driver:
		return int(s.Pool().Stat().TotalConns())
	case *sqlite.Driver:
		return s.DB().Stats().OpenConnections
	}
	return -1
}
