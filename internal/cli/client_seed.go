package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// seedInFlight bounds the requests `seed` has open at once: enough to
// fill a queue quickly, few enough not to swamp a small server.
const seedInFlight = 8

// seedLine is one line of a seed file, ready to send.
type seedLine struct {
	n           int
	app, action string
	input       []byte
}

// seedFailure is a line that was not enqueued.
type seedFailure struct {
	Line  int    `json:"line"`
	Error string `json:"error"`
}

// seedRun is the state of one `windforce seed`.
type seedRun struct {
	c          *client
	app, act   string
	stderr     io.Writer
	progress   *progressBar
	enqueued   atomic.Int64
	mu         sync.Mutex
	failures   []seedFailure
	abortOnce  sync.Once
	abortErr   error
	cancelSend context.CancelFunc
}

// runSeed is `windforce seed FILE.jsonl [--app A --action X]`: enqueue
// every line as a job with trigger kind seed, a few requests at a time.
// A bad line is reported with its number and the rest go on; any failed
// line makes the exit code 1.
func runSeed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cf := newClientFlags("seed", stderr)
	app := fs.String("app", "", "app of every line (then each line is just the input)")
	action := fs.String("action", "", "action of every line, with --app")
	pos, err := parseArgs(fs, args, 1, 1, "FILE.jsonl [--app A --action X]")
	if err != nil {
		return err
	}
	if (*app == "") != (*action == "") {
		return &UsageError{Msg: "--app and --action go together"}
	}
	c, err := cf.newClient()
	if err != nil {
		return err
	}
	in, size, closeIn, err := openSeedFile(pos[0])
	if err != nil {
		return err
	}
	defer closeIn()
	sr := &seedRun{c: c, app: *app, act: *action, stderr: stderr, progress: newProgressBar(stderr, size)}
	lines, err := sr.send(ctx, in)
	sr.progress.done()
	if err != nil {
		// Say what did get in: up to seedInFlight requests were cut off in
		// flight, so a resume should start from what the job list shows.
		fmt.Fprintf(stderr, "seed: %d of %d lines read were enqueued before it stopped; enqueues in flight were cut off, so check `windforce jobs list --trigger seed` before resuming\n",
			sr.enqueued.Load(), lines)
		return err
	}
	return sr.report(stdout, lines, cf.json)
}

// openSeedFile opens FILE, or stdin for "-"; size is 0 when unknown.
func openSeedFile(path string) (io.Reader, int64, func(), error) {
	if path == "-" {
		return Stdin, 0, func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("open seed file: %w", err)
	}
	var size int64
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	return f, size, func() { f.Close() }, nil
}

// send reads the lines and enqueues them with at most seedInFlight
// requests open; it returns the number of non-blank lines. It stops early
// only when the server cannot be used at all (unreachable, token refused).
func (sr *seedRun) send(ctx context.Context, in io.Reader) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sr.cancelSend = cancel
	sem := make(chan struct{}, seedInFlight)
	var wg sync.WaitGroup
	br := bufio.NewReader(in)
	n, count := 0, 0
	var read int64
	for ctx.Err() == nil {
		raw, err := br.ReadBytes('\n')
		if len(raw) > 0 {
			n++
			read += int64(len(raw))
			sr.progress.read(read)
			if len(bytes.TrimSpace(raw)) > 0 {
				count++
				line, perr := sr.parse(n, raw)
				if perr != nil {
					sr.fail(n, perr)
				} else {
					sem <- struct{}{}
					wg.Go(func() {
						defer func() { <-sem }()
						sr.enqueue(ctx, line)
					})
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			wg.Wait()
			return count, fmt.Errorf("read seed file at line %d: %w", n+1, err)
		}
	}
	wg.Wait()
	if sr.abortErr != nil {
		return count, sr.abortErr
	}
	if err := ctx.Err(); err != nil {
		return count, fmt.Errorf("seed stopped after %d lines: %w", n, err)
	}
	return count, nil
}

// parse reads one line: {"app","action","input"}, or with --app and
// --action the input itself. Nothing is sent for a bad line.
func (sr *seedRun) parse(n int, raw []byte) (seedLine, error) {
	raw = bytes.TrimSpace(raw)
	if sr.app != "" {
		if !json.Valid(raw) {
			return seedLine{}, errors.New("not valid JSON")
		}
		return seedLine{n: n, app: sr.app, action: sr.act, input: raw}, nil
	}
	var l struct {
		App    string          `json:"app"`
		Action string          `json:"action"`
		Input  json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		return seedLine{}, fmt.Errorf("want {\"app\",\"action\",\"input\"}: %w", err)
	}
	if l.App == "" || l.Action == "" {
		return seedLine{}, errors.New(`"app" and "action" are required (or pass --app and --action)`)
	}
	if len(l.Input) == 0 || string(l.Input) == "null" {
		l.Input = json.RawMessage("{}")
	}
	return seedLine{n: n, app: l.App, action: l.Action, input: l.Input}, nil
}

// enqueue sends one line through the run route with trigger kind seed.
func (sr *seedRun) enqueue(ctx context.Context, l seedLine) {
	_, _, err := sr.c.call(ctx, request{method: http.MethodPost, path: sr.c.ws("jobs", "run", l.app, l.action),
		body: l.input, header: map[string]string{"X-Windforce-Trigger": "seed"}})
	if err == nil {
		sr.enqueued.Add(1)
		sr.progress.sent(1)
		return
	}
	var apiErr *APIError
	if ctx.Err() != nil {
		return
	}
	if !errors.As(err, &apiErr) || apiErr.Status == http.StatusUnauthorized || apiErr.Status == http.StatusForbidden {
		// No later line can succeed either: stop instead of repeating it.
		sr.abortOnce.Do(func() {
			sr.abortErr = fmt.Errorf("seed stopped at line %d: %w", l.n, err)
			sr.cancelSend()
		})
		return
	}
	sr.fail(l.n, err)
}

// fail records a failed line and reports it at once.
func (sr *seedRun) fail(n int, err error) {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	sr.failures = append(sr.failures, seedFailure{Line: n, Error: err.Error()})
	sr.progress.clear()
	fmt.Fprintf(sr.stderr, "line %d: %s\n", n, strings.ReplaceAll(err.Error(), "\n", "\n  "))
}

// report prints the final count (JSON with --json) and fails when any
// line did.
func (sr *seedRun) report(stdout io.Writer, lines int, jsonOut bool) error {
	sort.Slice(sr.failures, func(i, j int) bool { return sr.failures[i].Line < sr.failures[j].Line })
	ok := sr.enqueued.Load()
	if jsonOut {
		failures := sr.failures
		if failures == nil {
			failures = []seedFailure{}
		}
		printJSON(stdout, jsonBody(map[string]any{"lines": lines, "enqueued": ok, "failed": len(failures), "errors": failures}))
	} else {
		fmt.Fprintf(sr.stderr, "seed: %d of %d lines enqueued, %d failed\n", ok, lines, len(sr.failures))
	}
	if len(sr.failures) > 0 {
		return fmt.Errorf("seed: %d of %d lines failed (first: line %d)", len(sr.failures), lines, sr.failures[0].Line)
	}
	return nil
}

// progressBar draws "[####    ] 45% 1234 enqueued" on a terminal's
// stderr; on anything else (a file, a pipe, a test buffer) it draws
// nothing and only the final count is printed.
type progressBar struct {
	w        io.Writer
	on       bool
	size     int64
	mu       sync.Mutex
	readN    int64
	sentN    int64
	lastDraw time.Time
}

func newProgressBar(w io.Writer, size int64) *progressBar {
	return &progressBar{w: w, on: isTerminal(w), size: size}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p *progressBar) read(n int64) {
	p.mu.Lock()
	p.readN = n
	p.mu.Unlock()
	p.draw(false)
}

func (p *progressBar) sent(n int64) {
	p.mu.Lock()
	p.sentN += n
	p.mu.Unlock()
	p.draw(false)
}

// draw redraws at most ten times a second (always when force).
func (p *progressBar) draw(force bool) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !force && time.Since(p.lastDraw) < 100*time.Millisecond {
		return
	}
	p.lastDraw = time.Now()
	if p.size <= 0 {
		fmt.Fprintf(p.w, "\r%d enqueued", p.sentN)
		return
	}
	const width = 30
	frac := min(float64(p.readN)/float64(p.size), 1)
	filled := int(frac * width)
	fmt.Fprintf(p.w, "\r[%s%s] %3.0f%% %d enqueued", strings.Repeat("#", filled), strings.Repeat(" ", width-filled), frac*100, p.sentN)
}

// clear wipes the bar so a message starts on a clean line.
func (p *progressBar) clear() {
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// done draws the final state and ends the line.
func (p *progressBar) done() {
	if p.on {
		p.draw(true)
		fmt.Fprintln(p.w)
	}
}
