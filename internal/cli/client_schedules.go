package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/windforce/windforce/server"
)

// apiSchedule is the schedule shape the API answers.
type apiSchedule = server.ScheduleView

const schedulesUsage = `usage: windforce schedules add|list|rm …
  schedules add APP/ACTION --cron EXPR [--timezone Z] [--input JSON|@FILE] [--no-overlap]
  schedules list
  schedules rm ID`

// runSchedules dispatches `windforce schedules SUBCOMMAND`.
func runSchedules(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return dispatch(ctx, "schedules", schedulesUsage, map[string]subcommand{
		"add": schedulesAdd, "list": schedulesList, "ls": schedulesList, "rm": schedulesRemove, "delete": schedulesRemove,
	}, args, stdout, stderr)
}

// schedulesAdd is `schedules add APP/ACTION --cron EXPR …`. The server
// checks the cron expression, the timezone and the input.
func schedulesAdd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cf := newClientFlags("schedules add", stderr)
	cron := fs.String("cron", "", `cron expression, 5 fields or 6 with seconds ("*/5 * * * *")`)
	tz := fs.String("timezone", "", "IANA timezone of the expression (default UTC)")
	inputSpec := fs.String("input", "", "input of every job: JSON, @FILE or - (default {})")
	noOverlap := fs.Bool("no-overlap", false, "skip a tick while the previous tick's job is still going")
	pos, err := parseArgs(fs, args, 1, 1, "APP/ACTION --cron EXPR [--timezone Z] [--input JSON] [--no-overlap]")
	if err != nil {
		return err
	}
	app, action, err := splitAppAction(pos[0])
	if err != nil {
		return err
	}
	if *cron == "" {
		return &UsageError{Msg: "--cron is required, like --cron '*/5 * * * *'"}
	}
	input, err := readInput(*inputSpec)
	if err != nil {
		return err
	}
	c, err := cf.newClient()
	if err != nil {
		return err
	}
	body := map[string]any{"app": app, "action": action, "cron": *cron, "timezone": *tz,
		"input": json.RawMessage(input), "no_overlap": *noOverlap}
	var s apiSchedule
	_, raw, err := c.callJSON(ctx, request{method: http.MethodPost, path: c.ws("schedules"), body: jsonBody(body)}, &s)
	if err != nil {
		return fmt.Errorf("add schedule for %s/%s: %w", app, action, err)
	}
	if cf.json {
		printJSON(stdout, raw)
		return nil
	}
	fmt.Fprintf(stdout, "schedule %s added: %s/%s at %q, next run %s\n", s.ID, s.App, s.Action, s.Cron, fmtTime(&s.NextRunAt))
	return nil
}

// schedulesList is `schedules list`.
func schedulesList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var out struct {
		Schedules []apiSchedule `json:"schedules"`
	}
	cf, raw, err := listCommand(ctx, "schedules", args, stderr, &out)
	if err != nil {
		return err
	}
	if cf.json {
		printJSON(stdout, raw)
		return nil
	}
	t := newTable(stdout, "ID", "APP/ACTION", "CRON", "TIMEZONE", "ENABLED", "NO-OVERLAP", "NEXT RUN", "LAST RUN", "LAST JOB")
	for _, s := range out.Schedules {
		tz := s.Timezone
		if tz == "" {
			tz = "UTC"
		}
		lastJob := ""
		if s.LastJobID != nil {
			lastJob = *s.LastJobID
		}
		t.row(s.ID, s.App+"/"+s.Action, s.Cron, tz, strconv.FormatBool(s.Enabled), strconv.FormatBool(s.NoOverlap),
			fmtTime(&s.NextRunAt), fmtTime(s.LastRunAt), lastJob)
	}
	return t.flush()
}

// schedulesRemove is `schedules rm ID`.
func schedulesRemove(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cf := newClientFlags("schedules rm", stderr)
	pos, err := parseArgs(fs, args, 1, 1, "ID")
	if err != nil {
		return err
	}
	c, err := cf.newClient()
	if err != nil {
		return err
	}
	_, raw, err := c.call(ctx, request{method: http.MethodDelete, path: c.ws("schedules", pos[0])})
	if err != nil {
		return fmt.Errorf("remove schedule %s: %w", pos[0], err)
	}
	if cf.json {
		if len(raw) == 0 {
			raw = jsonBody(map[string]any{"id": pos[0], "deleted": true})
		}
		printJSON(stdout, raw)
		return nil
	}
	fmt.Fprintf(stdout, "schedule %s removed\n", pos[0])
	return nil
}
