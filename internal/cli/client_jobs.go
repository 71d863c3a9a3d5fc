package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/windforce/windforce/server"
)

// apiJob is the job shape of DESIGN §4, the server's own type.
type apiJob = server.JobView

func jobTerminal(j apiJob) bool { return j.Status.Terminal() }

const jobsUsage = `usage: windforce jobs list|get|result|logs|cancel|reopen|requeue …
  jobs list [--status S] [--app A] [--action X] [--tag T] [--trigger K] [--limit N] [--cursor C]
  jobs get ID
  jobs result ID
  jobs logs ID [-f]
  jobs cancel ID [--reason R]
  jobs reopen ID [--force] [--reason R]
  jobs requeue [ID…] [--app A] [--action X] [--tag T] [--batch N]`

// runJobs dispatches `windforce jobs SUBCOMMAND`.
func runJobs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return dispatch(ctx, "jobs", jobsUsage, map[string]subcommand{
		"list": jobsList, "get": jobsGet, "result": jobsResult, "logs": jobsLogs,
		"cancel": jobsCancel, "reopen": jobsReopen, "requeue": jobsRequeue,
	}, args, stdout, stderr)
}

// jobsList is `jobs list`: newest first, one page; the next page's
// cursor is printed as a hint on stderr.
func jobsList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cf := newClientFlags("jobs list", stderr)
	filters := map[string]*string{}
	for _, name := range []string{"status", "app", "action", "tag", "trigger", "cursor"} {
		filters[name] = fs.String(name, "", "only jobs with this "+name)
	}
	limit := fs.Int("limit", 0, "jobs per page (server default when 0)")
	if _, err := parseArgs(fs, args, 0, 0, "[--status S] [--app A] [--action X] [--tag T] [--trigger K] [--limit N] [--cursor C]"); err != nil {
		return err
	}
	c, err := cf.newClient()
	if err != nil {
		return err
	}
	q := url.Values{}
	for name, v := range filters {
		if *v != "" {
			q.Set(name, *v)
		}
	}
	if *limit < 0 {
		return &UsageError{Msg: "--limit must not be negative"}
	}
	if *limit > 0 {
		q.Set("limit", strconv.Itoa(*limit))
	}
	var page struct {
		Jobs       []apiJob `json:"jobs"`
		NextCursor any      `json:"next_cursor"`
	}
	_, raw, err := c.callJSON(ctx, request{method: http.MethodGet, path: c.ws("jobs"), query: q}, &page)
	if err != nil {
		return fmt.Errorf("list jobs: %w", err)
	}
	if cf.json {
		printJSON(stdout, raw)
		return nil
	}
	t := newTable(stdout, "ID", "STATUS", "APP/ACTION", "TRIGGER", "TAG", "ATTEMPT", "CREATED", "DURATION")
	for _, j := range page.Jobs {
		t.row(j.ID, string(j.Status), j.App+"/"+j.Action, j.TriggerKind, j.Tag, strconv.Itoa(j.Attempt),
			fmtTime(&j.CreatedAt), fmtDuration(j.StartedAt, j.CompletedAt))
	}
	if err := t.flush(); err != nil {
		return err
	}
	if next, ok := page.NextCursor.(string); ok && next != "" {
		fmt.Fprintf(stderr, "more jobs: windforce jobs list --cursor %s\n", next)
	}
	return nil
}

// oneJobArg parses a job subcommand that takes exactly one ID.
func oneJobArg(name string, args []string, stderr io.Writer, extra func(*flag.FlagSet)) (*client, *clientFlags, string, error) {
	fs, cf := newClientFlags("jobs "+name, stderr)
	if extra != nil {
		extra(fs.FlagSet)
	}
	pos, err := parseArgs(fs, args, 1, 1, "ID")
	if err != nil {
		return nil, nil, "", err
	}
	c, err := cf.newClient()
	if err != nil {
		return nil, nil, "", err
	}
	return c, cf, pos[0], nil
}

// jobsGet is `jobs get ID`: the job's pinned metadata, state and outcome.
func jobsGet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, cf, id, err := oneJobArg("get", args, stderr, nil)
	if err != nil {
		return err
	}
	var j apiJob
	_, raw, err := c.callJSON(ctx, request{method: http.MethodGet, path: c.ws("jobs", id)}, &j)
	if err != nil {
		return fmt.Errorf("get job: %w", err)
	}
	if cf.json {
		printJSON(stdout, raw)
		return nil
	}
	return printJob(stdout, j)
}

// withLabel is an actor (token:<id>) with its token's label, if any.
func withLabel(actor, label string) string {
	if label == "" {
		return actor
	}
	return actor + " (" + label + ")"
}

// printJob writes one job for people.
func printJob(w io.Writer, j apiJob) error {
	errMsg := ""
	if j.Error != nil {
		errMsg = j.Error.Message
	}
	lastErr := ""
	if j.LastError != nil {
		lastErr = j.LastError.Message
	}
	err := keyValues(w,
		"id", j.ID, "status", string(j.Status), "app/action", j.App+"/"+j.Action, "workspace", j.Workspace,
		"trigger", j.TriggerKind+refSuffix(j.TriggerRef), "created by", withLabel(j.CreatedBy, j.CreatedByLabel),
		"source", j.GitSourceID, "commit", j.CommitSHA, "entrypoint", j.Entrypoint+" ("+j.Runtime+")",
		"tag", j.Tag, "priority", strconv.Itoa(j.Priority), "timeout", j.Timeout, "coalesce key", j.CoalesceKey,
		"attempt", strconv.Itoa(j.Attempt), "restarts", strconv.Itoa(j.Restarts), "worker", j.Worker,
		"created", fmtTime(&j.CreatedAt), "scheduled for", fmtTime(j.ScheduledFor),
		"started", fmtTime(j.StartedAt), "completed", fmtTime(j.CompletedAt),
		"duration", fmtDuration(j.StartedAt, j.CompletedAt),
		"canceled by", withLabel(j.CanceledBy, j.CanceledByLabel), "cancel reason", j.CanceledReason,
		"last error", lastErr, "error", errMsg)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "input:")
	printIndented(w, j.Input)
	if j.Status == "success" {
		fmt.Fprintln(w, "result:")
		printIndented(w, j.Result)
	}
	if j.Error != nil && j.Error.Stack != "" {
		fmt.Fprintln(w, "stack:")
		fmt.Fprintln(w, j.Error.Stack)
	}
	return nil
}

func refSuffix(ref string) string {
	if ref == "" {
		return ""
	}
	return " (" + ref + ")"
}

// jobsResult is `jobs result ID`: the result on stdout, or the error on
// stderr with the exit code of its status; a job still going is an error.
func jobsResult(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, cf, id, err := oneJobArg("result", args, stderr, nil)
	if err != nil {
		return err
	}
	o, raw, err := c.result(ctx, id)
	if err != nil {
		return fmt.Errorf("job result: %w", err)
	}
	return printOutcome(o, raw, cf.json, stdout, stderr)
}

// jobsLogs is `jobs logs ID [-f]`: the logs so far, or with -f the logs
// followed until the job ends.
func jobsLogs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var follow bool
	c, _, id, err := oneJobArg("logs", args, stderr, func(fs *flag.FlagSet) {
		fs.BoolVar(&follow, "f", false, "follow the logs until the job ends")
		fs.BoolVar(&follow, "follow", false, "same as -f")
	})
	if err != nil {
		return err
	}
	if !follow {
		_, text, err := c.call(ctx, request{method: http.MethodGet, path: c.ws("jobs", id, "logs")})
		if err != nil {
			return fmt.Errorf("job logs: %w", err)
		}
		_, err = stdout.Write(text)
		return err
	}
	status, err := c.followLogs(ctx, id, stdout)
	if err != nil {
		return fmt.Errorf("follow logs of job %s: %w", id, err)
	}
	fmt.Fprintf(stderr, "job %s ended: %s\n", id, status)
	return nil
}

// jobsCancel is `jobs cancel ID [--reason R]`.
func jobsCancel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var reason string
	c, cf, id, err := oneJobArg("cancel", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&reason, "reason", "", "why, recorded on the job")
	})
	if err != nil {
		return err
	}
	var out struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	_, raw, err := c.callJSON(ctx, request{method: http.MethodPost, path: c.ws("jobs", id, "cancel"),
		body: jsonBody(map[string]string{"reason": reason})}, &out)
	if err != nil {
		return fmt.Errorf("cancel job: %w", err)
	}
	if cf.json {
		printJSON(stdout, raw)
		return nil
	}
	if out.Status == "canceled" {
		fmt.Fprintf(stdout, "job %s canceled\n", out.ID)
	} else {
		fmt.Fprintf(stdout, "job %s is %s: cancel requested, its worker stops it at the next heartbeat\n", out.ID, out.Status)
	}
	return nil
}

// jobsReopen is `jobs reopen ID [--force] [--reason R]` (operator scope).
func jobsReopen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var reason string
	var force bool
	c, cf, id, err := oneJobArg("reopen", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&reason, "reason", "", "why, recorded in the audit table")
		fs.BoolVar(&force, "force", false, "reopen a canceled job too")
	})
	if err != nil {
		return err
	}
	var out struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	_, raw, err := c.callJSON(ctx, request{method: http.MethodPost, path: c.ws("jobs", id, "reopen"),
		body: jsonBody(map[string]any{"reason": reason, "force": force})}, &out)
	if err != nil {
		return fmt.Errorf("reopen job: %w", err)
	}
	if cf.json {
		printJSON(stdout, raw)
		return nil
	}
	fmt.Fprintf(stdout, "job %s reopened (%s)\n", out.ID, out.Status)
	return nil
}
