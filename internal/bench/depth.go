package bench

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/windforce/windforce/spine"
)

// DepthConfig says how Depth measures claim latency against queue depth.
type DepthConfig struct {
	// Shallow is the waiting queue of the reference figure; default 1000.
	Shallow int
	// Deep is the deep queue; default 1,000,000.
	Deep int
	// Samples is how many claims are timed at each depth; default 200.
	Samples int
	// Progress receives progress lines; nil discards.
	Progress io.Writer
}

// DepthResult is claim latency (one Claim of one job, as a worker with one
// free slot makes it) at three depths: Shallow jobs waiting on the served
// tag; the same plus Deep jobs on a tag the worker does not serve; and Deep
// jobs waiting on the served tag itself.
type DepthResult struct {
	System          string  `json:"system"`
	Mode            string  `json:"mode"`
	Database        string  `json:"database"`
	Shallow         int     `json:"shallow"`
	Deep            int     `json:"deep"`
	ClaimP50Shallow float64 `json:"claim_p50_ms_1k"`
	ClaimP99Shallow float64 `json:"claim_p99_ms_1k"`
	ClaimP50Other   float64 `json:"claim_p50_ms_1m_unserved_tag"`
	ClaimP99Other   float64 `json:"claim_p99_ms_1m_unserved_tag"`
	ClaimP50Served  float64 `json:"claim_p50_ms_1m_served_tag"`
	ClaimP99Served  float64 `json:"claim_p99_ms_1m_served_tag"`
	RatioOther      float64 `json:"ratio_unserved_vs_1k"`
	RatioServed     float64 `json:"ratio_served_vs_1k"`
	PeakRSSMiB      float64 `json:"peak_rss_mib"`
}

// Depth measures claim latency on s at the three depths of DepthResult.
func Depth(ctx context.Context, s spine.Store, database string, cfg DepthConfig) (DepthResult, error) {
	if cfg.Shallow <= 0 {
		cfg.Shallow = 1000
	}
	if cfg.Deep <= 0 {
		cfg.Deep = 1_000_000
	}
	if cfg.Samples <= 0 {
		cfg.Samples = 200
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	res := DepthResult{System: "windforce", Mode: "depth", Database: database, Shallow: cfg.Shallow, Deep: cfg.Deep}
	steps := []struct {
		fillTag  string
		fill     int
		p50, p99 *float64
	}{
		{Tag, cfg.Shallow, &res.ClaimP50Shallow, &res.ClaimP99Shallow},
		{OtherTag, cfg.Deep, &res.ClaimP50Other, &res.ClaimP99Other},
		{Tag, cfg.Deep, &res.ClaimP50Served, &res.ClaimP99Served},
	}
	for _, st := range steps {
		if err := fill(ctx, s, st.fillTag, st.fill, cfg.Progress); err != nil {
			return res, err
		}
		lat, err := timeClaims(ctx, s, cfg.Samples)
		if err != nil {
			return res, err
		}
		*st.p50, *st.p99 = percentile(lat, 50), percentile(lat, 99)
		fmt.Fprintf(cfg.Progress, "claim latency after filling %d on %s: p50 %.3f ms, p99 %.3f ms\n",
			st.fill, st.fillTag, *st.p50, *st.p99)
		// Put back what the samples took, so the served tag keeps its depth.
		if err := insertOn(ctx, s, Tag, cfg.Samples+claimWarmup); err != nil {
			return res, fmt.Errorf("refill: %w", err)
		}
	}
	if res.ClaimP50Shallow > 0 {
		res.RatioOther = round2(res.ClaimP50Other / res.ClaimP50Shallow)
		res.RatioServed = round2(res.ClaimP50Served / res.ClaimP50Shallow)
	}
	res.PeakRSSMiB = procStatusMiB("VmHWM")
	return res, nil
}

// fill enqueues n jobs on tag in batches of 5000, two writers at a time.
func fill(ctx context.Context, s spine.Store, tag string, n int, progress io.Writer) error {
	start := time.Now()
	const chunk = 5000
	chunks := make(chan int)
	errs := make(chan error, 2)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range chunks {
				if err := insertOn(ctx, s, tag, k); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var err error
feed:
	for done := 0; done < n; done += chunk {
		select {
		case chunks <- min(chunk, n-done):
		case err = <-errs:
			break feed
		}
		if (done/chunk)%40 == 39 {
			fmt.Fprintf(progress, "filling %s: %d/%d\n", tag, done+chunk, n)
		}
	}
	close(chunks)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errs:
		default:
		}
	}
	if err != nil {
		return fmt.Errorf("fill %d jobs on %s: %w", n, tag, err)
	}
	fmt.Fprintf(progress, "filled %d jobs on %s in %.1fs\n", n, tag, time.Since(start).Seconds())
	return nil
}

// claimWarmup is how many claims run untimed before each measurement, so
// connections and prepared statements are warm.
const claimWarmup = 20

// timeClaims times n claims of one job on the bench tag, after
// claimWarmup untimed ones, completing each job (untimed) so the queue
// stays as it was.
func timeClaims(ctx context.Context, s spine.Store, n int) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for i := range n + claimWarmup {
		t0 := time.Now()
		jobs, err := s.Claim(ctx, spine.ClaimParams{Worker: "bench-depth", Tags: []string{Tag}, Limit: 1})
		d := time.Since(t0)
		if err != nil {
			return nil, fmt.Errorf("claim: %w", err)
		}
		if len(jobs) != 1 {
			return nil, fmt.Errorf("claim: got %d jobs, want 1", len(jobs))
		}
		if i >= claimWarmup {
			out = append(out, d)
		}
		if _, err := s.Complete(ctx, spine.CompleteParams{Lease: spine.Lease{JobID: jobs[0].ID, ClaimToken: jobs[0].ClaimToken}}); err != nil {
			return nil, fmt.Errorf("complete: %w", err)
		}
	}
	return out, nil
}

func round2(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }
