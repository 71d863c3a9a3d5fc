package bench

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/windforce/windforce/examples"
)

// bareScript is the bare side's stand-in for the runtime wrapper.
//
//go:embed e2edata/bare.mjs
var bareScript []byte

// bareBun spawns bun on the example's entrypoint the way the runtime
// wrapper runs a job (read input and ctx, import, call main, write the
// result file), with nothing of windforce around it: the baseline every
// end-to-end figure is divided by.
type bareBun struct {
	bun  string
	dir  string
	next atomic.Int64
}

// newBareBun prepares dir: the example app's files (the same main.ts the
// jobs run), the script, and one input and ctx file for every spawn.
func newBareBun(dir string) (*bareBun, error) {
	bun, err := exec.LookPath("bun")
	if err != nil {
		return nil, fmt.Errorf("bare bun: bun is not installed (npm install -g bun): %w", err)
	}
	if err := os.CopyFS(filepath.Join(dir, "app"), examples.Hello()); err != nil {
		return nil, fmt.Errorf("bare bun: copy the example: %w", err)
	}
	files := map[string][]byte{
		"bare.mjs":   bareScript,
		"input.json": []byte(`{"name":"bench"}`),
		"ctx.json":   []byte(`{"action":"greet","app":"hello","entrypoint":"src/main.ts"}`),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return nil, fmt.Errorf("bare bun: write %s: %w", name, err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
		return nil, fmt.Errorf("bare bun: %w", err)
	}
	return &bareBun{bun: bun, dir: dir}, nil
}

// version is what `bun --version` prints.
func (b *bareBun) version(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, b.bun, "--version").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// once spawns bun for one "job" and returns the time from the spawn to
// the result read back, as a worker would read it. Its stdout (the
// greeting log line) goes through a pipe, as a job's logs do.
func (b *bareBun) once(ctx context.Context) (time.Duration, error) {
	n := b.next.Add(1)
	res := filepath.Join(b.dir, "out", strconv.FormatInt(n, 10)+".json")
	cmd := exec.CommandContext(ctx, b.bun, "--no-install", filepath.Join(b.dir, "bare.mjs"))
	cmd.Dir = b.dir
	cmd.Env = append(os.Environ(),
		"WF_INPUT="+filepath.Join(b.dir, "input.json"), "WF_CTX="+filepath.Join(b.dir, "ctx.json"),
		"WF_ENTRYPOINT="+filepath.Join(b.dir, "app", "src", "main.ts"),
		"WF_RESULT="+res, "WF_ERROR="+res+".error")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	began := time.Now()
	err := cmd.Run()
	out, rerr := os.ReadFile(res)
	took := time.Since(began)
	if err != nil {
		return 0, fmt.Errorf("bare bun: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	if rerr != nil {
		return 0, fmt.Errorf("bare bun: read result: %w", rerr)
	}
	if !bytes.Contains(out, []byte("Hello, bench!")) {
		return 0, fmt.Errorf("bare bun: unexpected result %s", out)
	}
	if err := os.Remove(res); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("bare bun: %w", err)
	}
	return took, nil
}

// runConcurrently calls one n times, at most c at a time, and returns the
// wall time from the first call to the last return and each call's
// duration. The first error stops the run.
func runConcurrently(ctx context.Context, n, c int, one func(context.Context) (time.Duration, error)) (time.Duration, []time.Duration, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		next atomic.Int64
		mu   sync.Mutex
		lat  = make([]time.Duration, 0, n)
		wg   sync.WaitGroup
	)
	began := time.Now()
	for range min(c, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) && ctx.Err() == nil {
				d, err := one(ctx)
				if err != nil {
					cancel(err)
					return
				}
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	if err := context.Cause(ctx); err != nil {
		return 0, nil, err
	}
	return elapsed, lat, nil
}
