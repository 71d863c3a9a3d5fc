package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/windforce/windforce/examples"
	"github.com/windforce/windforce/source"
)

// The warm side of `windforce bench --e2e --warm`: the example's greet
// action once more, as app hellowarm with `warm: true`, in a source of its
// own ("warm") next to the cold hello, so cold and warm run the same code
// on the same installation in the same minutes.
const (
	warmSource = "warm"
	warmApp    = "hellowarm"
)

// warmManifest is the warm source's windforce.yaml: hello's greet, warm.
const warmManifest = `apps:
  hellowarm:
    entrypoint: src/main.ts
    runtime: bun
    timeout: 60s
    tag: default
    warm: true
    actions:
      greet:
        input_schema: schemas/greet.input.json
        output_schema: schemas/greet.output.json
        timeout: 10s
`

// addWarmSource commits the example's files with warmManifest to a bare
// repository in gitDir (made with real git) and adds and syncs it through
// the API as source "warm".
func addWarmSource(ctx context.Context, api *apiClient, gitDir string) error {
	files := filepath.Join(gitDir, "warm-files")
	if err := os.CopyFS(files, examples.Hello()); err != nil {
		return fmt.Errorf("e2e warm: copy the example: %w", err)
	}
	if err := os.WriteFile(filepath.Join(files, "windforce.yaml"), []byte(warmManifest), 0o644); err != nil {
		return fmt.Errorf("e2e warm: write the manifest: %w", err)
	}
	bare := filepath.Join(gitDir, "warm.git")
	if err := (&source.Git{}).InitRepo(ctx, bare, "main", os.DirFS(files), "hello, warm"); err != nil {
		return fmt.Errorf("e2e warm: repository: %w", err)
	}
	src := fmt.Sprintf(`{"id":%q,"url":%q,"branch":"main"}`, warmSource, "file://"+bare)
	if _, err := api.call(ctx, http.StatusCreated, "POST", "/sources", src); err != nil {
		return fmt.Errorf("e2e warm: add the source: %w", err)
	}
	if _, err := api.call(ctx, http.StatusOK, "POST", "/sources/"+warmSource+"/sync", ""); err != nil {
		return fmt.Errorf("e2e warm: sync the source (does the manifest know warm:?): %w", err)
	}
	return nil
}

// E2EWarm is what --warm adds to a database's result: the warm action's
// round trips beside the cold ones, its throughput, and the warm pool's
// memory. Times in milliseconds.
type E2EWarm struct {
	// WaitP50 and WaitP99: one `POST …/run/hellowarm/greet?wait=60s`,
	// one request at a time (the cold figures' conditions).
	WaitP50 float64 `json:"wait_p50_ms"`
	WaitP99 float64 `json:"wait_p99_ms"`
	// OverheadP50 is WaitP50 minus bare bun's start p50: negative when a
	// warm job answers faster than bun can start.
	OverheadP50 float64      `json:"overhead_p50_ms"`
	Samples     int          `json:"samples"`
	Breakdown   E2EBreakdown `json:"breakdown"`
	// Throughput is one row per concurrency level, as the cold ones.
	Throughput []E2EThroughput `json:"throughput"`
	// Burst is the --throughput run, when asked for.
	Burst *E2EBurst `json:"burst,omitempty"`
	// Memory is the warm pool after the runs, idle.
	Memory E2EWarmMemory `json:"memory"`
}

// E2EBurst is many warm jobs with many requests in flight: jobs per second
// through `?wait` (each client waits for its answer before the next).
type E2EBurst struct {
	Clients    int     `json:"clients"`
	Jobs       int     `json:"jobs"`
	Seconds    float64 `json:"seconds"`
	JobsPerSec float64 `json:"jobs_per_sec"`
	P50        float64 `json:"p50_ms"`
	P99        float64 `json:"p99_ms"`
	// Breakdown splits a sample of the round trips (see burst).
	Breakdown E2EBreakdown `json:"breakdown"`
}

// E2EWarmMemory is the worker's warm processes, read from /proc after the
// runs: every bun below the worker process (a cold job's bun has exited
// by then), and everything below the worker (bun, the sandbox's bwrap and
// init) as the pool's total.
type E2EWarmMemory struct {
	Processes     int     `json:"processes"`
	IdleRSSP50MiB float64 `json:"idle_rss_p50_mib"`
	IdleRSSMaxMiB float64 `json:"idle_rss_max_mib"`
	PoolRSSMiB    float64 `json:"pool_rss_mib"`
	TreeProcesses int     `json:"tree_processes"`
}

// greetWarm is greetWait on the warm app.
func (a *apiClient) greetWarm(ctx context.Context) (time.Duration, string, error) {
	return a.greetApp(ctx, warmApp)
}

// burstSample is how many of a burst's jobs are read back for its
// breakdown: enough for a p50, few enough not to lengthen the run.
const burstSample = 500

// burst runs jobs warm jobs with clients requests in flight, then splits
// the round trips of an even sample of them by their jobs' timestamps:
// under load, queued says how long jobs wait for a slot and a claim.
func burst(ctx context.Context, api *apiClient, jobs, clients int) (*E2EBurst, error) {
	var mu sync.Mutex
	trips := make([]trip, 0, jobs)
	took, lat, err := runConcurrently(ctx, jobs, clients, func(ctx context.Context) (time.Duration, error) {
		d, id, err := api.greetWarm(ctx)
		mu.Lock()
		trips = append(trips, trip{id: id, took: d})
		mu.Unlock()
		return d, err
	})
	if err != nil {
		return nil, err
	}
	b := &E2EBurst{Clients: clients, Jobs: jobs, Seconds: round3(took.Seconds()), JobsPerSec: perSec(jobs, took),
		P50: percentile(lat, 50), P99: percentile(lat, 99)}
	step := max(1, len(trips)/burstSample)
	var sample []trip
	for i := 0; i < len(trips); i += step {
		sample = append(sample, trips[i])
	}
	if b.Breakdown, err = breakdown(ctx, api, sample); err != nil {
		return nil, err
	}
	return b, nil
}

// warmMemory reads the process tree below pid from /proc.
func warmMemory(pid int) (E2EWarmMemory, error) {
	procs, err := processTree(pid)
	if err != nil {
		return E2EWarmMemory{}, err
	}
	var m E2EWarmMemory
	var bun []float64
	for _, p := range procs {
		m.TreeProcesses++
		m.PoolRSSMiB += p.rssMiB
		if p.comm == "bun" {
			bun = append(bun, p.rssMiB)
		}
	}
	slices.Sort(bun)
	m.Processes = len(bun)
	if len(bun) > 0 {
		m.IdleRSSP50MiB, m.IdleRSSMaxMiB = round1(bun[(len(bun)-1)/2]), round1(bun[len(bun)-1])
	}
	m.PoolRSSMiB = round1(m.PoolRSSMiB)
	return m, nil
}

// proc is one process of /proc.
type proc struct {
	pid, ppid int
	comm      string
	rssMiB    float64
}

// processTree lists the descendants of pid (not pid itself).
func processTree(pid int) ([]proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("e2e warm: read /proc: %w", err)
	}
	children := map[int][]proc{}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(n); ok {
			children[p.ppid] = append(children[p.ppid], p)
		}
	}
	var out []proc
	next := []int{pid}
	for len(next) > 0 {
		kids := children[next[0]]
		next = next[1:]
		for _, k := range kids {
			out = append(out, k)
			next = append(next, k.pid)
		}
	}
	return out, nil
}

// readProc reads a process's name, parent and resident memory; false when
// it is gone or unreadable.
func readProc(pid int) (proc, bool) {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return proc{}, false
	}
	defer f.Close()
	p := proc{pid: pid}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		rest = strings.TrimSpace(rest)
		switch name {
		case "Name":
			p.comm = rest
		case "PPid":
			p.ppid, _ = strconv.Atoi(rest)
		case "VmRSS":
			if kb, err := strconv.ParseFloat(strings.Fields(rest)[0], 64); err == nil {
				p.rssMiB = kb / 1024
			}
		}
	}
	return p, true
}
