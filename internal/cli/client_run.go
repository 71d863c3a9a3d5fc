package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/windforce/windforce/spine"
)

// JobFailedError is a job that ended in failure (exit code 1). The
// command has printed the job's error message and stack on stderr.
type JobFailedError struct {
	ID      string
	Message string
}

// Error is short: the command has already printed the message and stack.
func (e *JobFailedError) Error() string { return fmt.Sprintf("job %s failed", e.ID) }

// JobCanceledError is a job that ended canceled (exit code 2).
type JobCanceledError struct {
	ID     string
	Reason string
}

// Error is short: the command has already printed the reason.
func (e *JobCanceledError) Error() string { return fmt.Sprintf("job %s was canceled", e.ID) }

// jobError is the "error" of a job: {"message","stack","kind"}.
type jobError = spine.JobError

// jobOutcome is the answer of …/jobs/{id}/result: {id,status} plus result
// or error once finished.
type jobOutcome struct {
	ID     string          `json:"id"`
	Status string          `json:"status"`
	Result json.RawMessage `json:"result"`
	Error  *jobError       `json:"error"`
}

// terminal reports whether the job has finished.
func (o jobOutcome) terminal() bool {
	switch o.Status {
	case "success", "failure", "canceled":
		return true
	}
	return false
}

// result reads a job's outcome and its raw answer.
func (c *client) result(ctx context.Context, id string) (jobOutcome, []byte, error) {
	var o jobOutcome
	_, raw, err := c.callJSON(ctx, request{method: http.MethodGet, path: c.ws("jobs", id, "result")}, &o)
	return o, raw, err
}

// runFlags are the flags of `windforce run`.
type runFlags struct {
	*clientFlags
	input, coalesceKey, scheduledFor string
	wait                             bool
	timeout                          time.Duration
	priority                         int
	prioritySet                      bool
}

const runUsage = "APP/ACTION [--input JSON|@FILE|-] [--wait] [--timeout D] [--priority N] [--coalesce-key K] [--scheduled-for T]"

// runRun is `windforce run APP/ACTION`: enqueue through the API (trigger
// cli); print the id, or with --wait follow the job and print its result.
func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cf := newClientFlags("run", stderr)
	f := &runFlags{clientFlags: cf}
	fs.StringVar(&f.input, "input", "", "input JSON, @FILE to read a file, - to read stdin (default {})")
	fs.BoolVar(&f.wait, "wait", false, "wait for the job, streaming its logs to stderr, and print its result")
	fs.DurationVar(&f.timeout, "timeout", 0, "with --wait, stop waiting after this long (0: no limit); the job keeps going")
	fs.IntVar(&f.priority, "priority", 0, "queue priority, higher first")
	fs.StringVar(&f.coalesceKey, "coalesce-key", "", "at most one waiting job per key; a new run replaces its input")
	fs.StringVar(&f.scheduledFor, "scheduled-for", "", "run at an RFC 3339 time or after a delay like 10m")
	pos, err := parseArgs(fs, args, 1, 1, runUsage)
	if err != nil {
		return err
	}
	fs.Visit(func(fl *flag.Flag) { f.prioritySet = f.prioritySet || fl.Name == "priority" })
	app, action, err := splitAppAction(pos[0])
	if err != nil {
		return err
	}
	req, err := f.request(app, action)
	if err != nil {
		return err
	}
	c, err := cf.newClient()
	if err != nil {
		return err
	}
	req.path = c.ws("jobs", "run", app, action)
	var created struct {
		ID string `json:"id"`
	}
	_, raw, err := c.callJSON(ctx, req, &created)
	if err != nil {
		return fmt.Errorf("run %s/%s: %w", app, action, err)
	}
	if !f.wait {
		if f.json {
			printJSON(stdout, raw)
		} else {
			fmt.Fprintln(stdout, created.ID)
		}
		return nil
	}
	fmt.Fprintf(stderr, "job %s queued (%s/%s)\n", created.ID, app, action)
	return waitAndPrint(ctx, c, created.ID, f.timeout, f.json, stdout, stderr)
}

// request builds the run request from the flags (path set by the caller).
func (f *runFlags) request(app, action string) (request, error) {
	input, err := readInput(f.input)
	if err != nil {
		return request{}, err
	}
	q := url.Values{}
	if f.prioritySet {
		q.Set("priority", strconv.Itoa(f.priority))
	}
	if f.coalesceKey != "" {
		q.Set("coalesce_key", f.coalesceKey)
	}
	if f.scheduledFor != "" {
		t, err := parseWhen(f.scheduledFor, time.Now())
		if err != nil {
			return request{}, err
		}
		q.Set("scheduled_for", t.UTC().Format(time.RFC3339Nano))
	}
	if f.timeout < 0 {
		return request{}, &UsageError{Msg: "--timeout must not be negative"}
	}
	return request{method: http.MethodPost, query: q, body: input,
		header: map[string]string{"X-Windforce-Trigger": "cli"}}, nil
}

// splitAppAction splits "hello/greet".
func splitAppAction(s string) (string, string, error) {
	app, action, ok := strings.Cut(s, "/")
	if !ok || app == "" || action == "" || strings.Contains(action, "/") {
		return "", "", &UsageError{Msg: fmt.Sprintf("%q: want APP/ACTION, like hello/greet", s)}
	}
	return app, action, nil
}

// readInput reads --input: literal JSON, @FILE, or - for stdin; empty is
// {}. Input that is not JSON is refused before anything is sent.
func readInput(spec string) ([]byte, error) {
	var data []byte
	switch {
	case spec == "":
		return []byte("{}"), nil
	case spec == "-":
		b, err := io.ReadAll(Stdin)
		if err != nil {
			return nil, fmt.Errorf("read input from stdin: %w", err)
		}
		data = b
	case strings.HasPrefix(spec, "@"):
		b, err := os.ReadFile(spec[1:])
		if err != nil {
			return nil, fmt.Errorf("read input file: %w", err)
		}
		data = b
	default:
		data = []byte(spec)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, &UsageError{Msg: fmt.Sprintf("--input is not valid JSON: %v", err)}
	}
	return data, nil
}

// parseWhen reads an RFC 3339 time, or a delay ("10m", "+1h30m") from now.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(strings.TrimPrefix(s, "+")); err == nil && d >= 0 {
		return now.Add(d), nil
	}
	return time.Time{}, &UsageError{Msg: fmt.Sprintf("--scheduled-for %q: want an RFC 3339 time (2026-01-02T15:04:05Z) or a delay (10m)", s)}
}

// waitAndPrint follows job id until it ends (or timeout passes), then
// prints its result on stdout and maps failure and cancel to errors.
func waitAndPrint(ctx context.Context, c *client, id string, timeout time.Duration, jsonOut bool, stdout, stderr io.Writer) error {
	o, raw, err := waitJob(ctx, c, id, timeout, stderr)
	if err != nil {
		return err
	}
	return printOutcome(o, raw, jsonOut, stdout, stderr)
}

// waitJob streams the job's logs to stderr and its status changes as
// lines on stderr until it finishes, then reads its outcome.
func waitJob(ctx context.Context, c *client, id string, timeout time.Duration, stderr io.Writer) (jobOutcome, []byte, error) {
	wctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	errw := &lockedWriter{w: stderr}
	watchCtx, stopWatch := context.WithCancel(wctx)
	sw := &statusWatcher{c: c, id: id, w: errw}
	var wg sync.WaitGroup
	wg.Go(func() { sw.run(watchCtx) })
	_, err := c.followLogs(wctx, id, errw)
	stopWatch()
	wg.Wait()
	if err != nil {
		if ctx.Err() == nil && wctx.Err() != nil {
			return jobOutcome{}, nil, fmt.Errorf("stopped waiting after %s: job %s is still %s and keeps going (windforce jobs get %s)",
				timeout, id, sw.last(), id)
		}
		return jobOutcome{}, nil, fmt.Errorf("wait for job %s: %w", id, err)
	}
	// The stream ends with the job; the outcome is committed with the
	// status, so one read normally suffices. Poll briefly in case a
	// server ended the stream a moment early.
	for interval := 50 * time.Millisecond; ; interval = min(interval*2, time.Second) {
		o, raw, err := c.result(ctx, id)
		if err != nil {
			return o, raw, err
		}
		if o.terminal() {
			fmt.Fprintln(stderr, c.describeEnd(ctx, o))
			return o, raw, nil
		}
		if err := sleepCtx(ctx, interval); err != nil {
			return o, raw, err
		}
	}
}

// printOutcome prints a finished job: the result on stdout (the whole
// answer with --json), or the error with its stack on stderr.
func printOutcome(o jobOutcome, raw []byte, jsonOut bool, stdout, stderr io.Writer) error {
	if jsonOut {
		printJSON(stdout, raw)
	}
	e := o.Error
	if e == nil {
		e = &jobError{Message: o.Status}
	}
	switch o.Status {
	case "success":
		if !jsonOut {
			printIndented(stdout, o.Result)
		}
		return nil
	case "failure":
		fmt.Fprintf(stderr, "job %s failed: %s\n", o.ID, e.Message)
		if stack := stackBody(e); stack != "" {
			fmt.Fprintln(stderr, stack)
		}
		return &JobFailedError{ID: o.ID, Message: e.Message}
	case "canceled":
		reason := strings.TrimPrefix(e.Message, "canceled: ")
		fmt.Fprintf(stderr, "job %s canceled: %s\n", o.ID, reason)
		return &JobCanceledError{ID: o.ID, Reason: reason}
	}
	return fmt.Errorf("job %s is %s: no result yet", o.ID, o.Status)
}

// stackBody is the error's stack without a first line that only repeats
// the message ("Error: boom" in a JavaScript stack).
func stackBody(e *jobError) string {
	stack := strings.TrimRight(e.Stack, "\n")
	first, rest, _ := strings.Cut(stack, "\n")
	if e.Message != "" && strings.Contains(first, e.Message) {
		return rest
	}
	return stack
}

// statusWatcher prints a line on stderr each time the job's status (or
// attempt) changes while run --wait streams its logs.
type statusWatcher struct {
	c  *client
	id string
	w  io.Writer

	mu     sync.Mutex
	status string
}

func (s *statusWatcher) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.status == "" {
		return "queued"
	}
	return s.status
}

// run polls the job until ctx ends or the job finishes. Errors are left
// to the log stream, which reports them.
func (s *statusWatcher) run(ctx context.Context) {
	seen := ""
	interval := 100 * time.Millisecond
	for ctx.Err() == nil {
		var j apiJob
		if _, _, err := s.c.callJSON(ctx, request{method: http.MethodGet, path: s.c.ws("jobs", s.id)}, &j); err == nil {
			key := string(j.Status) + "/" + strconv.Itoa(j.Attempt)
			// The end is printed once by waitJob, which sees it for sure.
			if key != seen && (seen != "" || j.Status != "queued") && !jobTerminal(j) {
				fmt.Fprintln(s.w, describeStatus(j))
			}
			seen = key
			s.mu.Lock()
			s.status = string(j.Status)
			s.mu.Unlock()
			if jobTerminal(j) {
				return
			}
		}
		if sleepCtx(ctx, interval) != nil {
			return
		}
		interval = min(interval*2, time.Second)
	}
}

// describeEnd is the final status line, with the run time when the job
// can be read.
func (c *client) describeEnd(ctx context.Context, o jobOutcome) string {
	var j apiJob
	if _, _, err := c.callJSON(ctx, request{method: http.MethodGet, path: c.ws("jobs", o.ID)}, &j); err != nil || string(j.Status) != o.Status {
		return fmt.Sprintf("job %s %s", o.ID, o.Status)
	}
	return describeStatus(j)
}

// describeStatus is one status line: "job … running on w1 (attempt 1)".
func describeStatus(j apiJob) string {
	switch j.Status {
	case "running":
		return fmt.Sprintf("job %s running on %s (attempt %d)", j.ID, j.Worker, j.Attempt)
	case "success", "failure", "canceled":
		if d := fmtDuration(j.StartedAt, j.CompletedAt); d != "" {
			return fmt.Sprintf("job %s %s after %s", j.ID, j.Status, d)
		}
	case "queued":
		if j.LastError != nil {
			return fmt.Sprintf("job %s queued to retry after: %s", j.ID, j.LastError.Message)
		}
	}
	return fmt.Sprintf("job %s %s", j.ID, j.Status)
}
