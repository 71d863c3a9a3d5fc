package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/windforce/windforce/internal/apitest"
	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/runner"
	"github.com/windforce/windforce/spine"
)

// BenchmarkTrivialJobFloor is the spine's floor for a trivial job: the
// real server over a real store (SQLite file, Postgres schema), a `POST
// …/run/hello/greet?wait=60s` per iteration, and an in-process worker
// whose handler answers at once (no runner, no process). What it costs is
// everything around the job's process: HTTP in, enqueue, the worker's
// wake-up and claim, the completion, the waiter's wake-up, HTTP out.
//
//	go test -run '^$' -bench TrivialJobFloor -benchtime 2000x ./internal/bench/
func BenchmarkTrivialJobFloor(b *testing.B) {
	for _, c := range []int{1, 16} {
		b.Run(fmt.Sprintf("sqlite/c%d", c), func(b *testing.B) { floor(b, apitest.NewSQLite(b, apitest.Options{}), c, answerAtOnce) })
		b.Run(fmt.Sprintf("postgres/c%d", c), func(b *testing.B) { floor(b, apitest.NewPostgres(b, apitest.Options{}), c, answerAtOnce) })
	}
}

// BenchmarkTrivialJobRunner is BenchmarkTrivialJobFloor with the real
// runner (job sandbox, bun) in the worker: hello/greet cold, and warm (its
// pin given Warm as the manifest's `warm: true` does), one request at a
// time and 16.
//
//	go test -run '^$' -bench TrivialJobRunner -benchtime 500x ./internal/bench/
func BenchmarkTrivialJobRunner(b *testing.B) {
	requireBun(b)
	testdb.RequireSandbox(b)
	for _, warm := range []bool{false, true} {
		for _, c := range []int{1, 16} {
			name := map[bool]string{false: "cold", true: "warm"}[warm]
			b.Run(fmt.Sprintf("%s/sqlite/c%d", name, c), func(b *testing.B) {
				e := apitest.NewSQLite(b, apitest.Options{})
				floor(b, e, c, runnerHandler(b, e, warm))
			})
			b.Run(fmt.Sprintf("%s/postgres/c%d", name, c), func(b *testing.B) {
				e := apitest.NewPostgres(b, apitest.Options{})
				floor(b, e, c, runnerHandler(b, e, warm))
			})
		}
	}
}

// runnerHandler is a runner's Handle over e, forcing jobs warm when warm.
func runnerHandler(b *testing.B, e *apitest.Env, warm bool) spine.Handler {
	r, err := runner.New(runner.Config{Store: e.DB, Cache: e.Cache, Dir: filepath.Join(b.TempDir(), "wf"),
		Secret: e.Options.Secret, URL: e.URL, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(r.Close)
	if !warm {
		return r.Handle
	}
	return func(ctx context.Context, job *spine.ClaimedJob) (json.RawMessage, error) {
		job.Pin.Warm = &spine.DefaultWarm
		return r.Handle(ctx, job)
	}
}

// answerAtOnce is the floor's handler: the trivial job's result, no work.
func answerAtOnce(context.Context, *spine.ClaimedJob) (json.RawMessage, error) {
	return json.RawMessage(`{"greeting":"Hello, bench!"}`), nil
}

func floor(b *testing.B, e *apitest.Env, c int, h spine.Handler) {
	w, err := spine.NewWorker(spine.WorkerConfig{Store: e.DB, Concurrency: max(c, 8), Logger: slog.New(slog.DiscardHandler), Handler: h})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	client := &http.Client{Transport: tr}
	defer client.CloseIdleConnections()
	url := e.URL + "/api/w/" + e.Options.Workspace + "/jobs/run/hello/greet?wait=60s"
	one := func(ctx context.Context) (time.Duration, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(`{"name":"bench"}`))
		req.Header.Set("Authorization", "Bearer "+e.Options.AdminToken)
		began := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		took := time.Since(began)
		if err != nil || res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"success"`) {
			return 0, fmt.Errorf("status %d: %s (%v)", res.StatusCode, body, err)
		}
		return took, nil
	}
	ctx := context.Background()
	if _, _, err := runConcurrently(ctx, 20, c, one); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	took, lat, err := runConcurrently(ctx, b.N, c, one)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(percentile(lat, 50), "p50-ms")
	b.ReportMetric(percentile(lat, 99), "p99-ms")
	b.ReportMetric(float64(b.N)/took.Seconds(), "jobs/s")
}
