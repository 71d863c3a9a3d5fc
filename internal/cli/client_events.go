package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

const eventsUsage = `usage: windforce events sinks|deliveries|tail …
  events sinks add --kind nats|webhook URL [--subject PREFIX] [--types a,b] [--id ID]
  events sinks list
  events sinks rm ID
  events deliveries SINK [--status pending|delivered|failed] [--limit N] [--cursor C]
  events tail [--json] [--type a,b] [--after SEQ | --all]`

const sinksUsage = `usage: windforce events sinks add|list|rm …
  events sinks add --kind nats|webhook URL [--subject PREFIX] [--types a,b] [--id ID]
  events sinks list
  events sinks rm ID`

// apiSink is an event sink as the API answers it (DESIGN §9); Secret is
// only there in the answer to its creation.
type apiSink struct {
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	URL       string    `json:"url"`
	Subject   string    `json:"subject"`
	Types     []string  `json:"types"`
	Enabled   bool      `json:"enabled"`
	Secret    string    `json:"secret"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy string    `json:"created_by"`
}

// apiDelivery is one event's delivery to one sink, as
// GET …/event-sinks/{id}/deliveries answers it.
type apiDelivery struct {
	EventID       string     `json:"event_id"`
	Seq           int64      `json:"seq"`
	Type          string     `json:"type"`
	Subject       string     `json:"subject"`
	Status        string     `json:"status"`
	Attempts      int        `json:"attempts"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	LastError     string     `json:"last_error"`
	DeliveredAt   *time.Time `json:"delivered_at"`
}

// runEvents dispatches `windforce events SUBCOMMAND`.
func runEvents(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return dispatch(ctx, "events", eventsUsage, map[string]subcommand{
		"sinks": runSinks, "deliveries": eventsDeliveries, "tail": eventsTail,
	}, args, stdout, stderr)
}

// runSinks dispatches `windforce events sinks SUBCOMMAND`.
func runSinks(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return dispatch(ctx, "events sinks", sinksUsage, map[string]subcommand{
		"add": sinksAdd, "list": sinksList, "ls": sinksList, "rm": sinksRemove, "delete": sinksRemove,
	}, args, stdout, stderr)
}

// sinksAdd is `events sinks add --kind … URL`. The sink's URL is an
// argument, not --url, which every client command reads as the API's
// address. The server checks every field; a webhook sink's generated
// secret is printed once, here.
func sinksAdd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cf := newClientFlags("events sinks add", stderr)
	kind := fs.String("kind", "", "nats or webhook")
	subject := fs.String("subject", "", `NATS subject prefix (default "windforce")`)
	types := fs.String("types", "", "event types to send, comma separated (default all): job.succeeded,job.failed")
	id := fs.String("id", "", "the sink's id (default: generated)")
	pos, err := parseArgs(fs, args, 1, 1, "--kind nats|webhook URL [--subject PREFIX] [--types a,b] [--id ID]")
	if err != nil {
		return err
	}
	if *kind == "" {
		return &UsageError{Msg: "--kind is required: --kind webhook https://example.com/hook, or --kind nats nats://127.0.0.1:4222"}
	}
	c, err := cf.newClient()
	if err != nil {
		return err
	}
	body := map[string]any{"kind": *kind, "url": pos[0], "types": splitList(*types)}
	if *id != "" {
		body["id"] = *id
	}
	if *subject != "" {
		body["subject"] = *subject
	}
	var s apiSink
	_, raw, err := c.callJSON(ctx, request{method: http.MethodPost, path: c.ws("event-sinks"), body: jsonBody(body)}, &s)
	if err != nil {
		return fmt.Errorf("add %s sink: %w", *kind, err)
	}
	if cf.json {
		printJSON(stdout, raw)
		return nil
	}
	fmt.Fprintf(stdout, "sink %s added: %s %s (%s)\n", s.ID, s.Kind, s.URL, typesText(s.Types))
	if s.Secret != "" {
		fmt.Fprintf(stdout, "webhook secret (shown once, keep it to verify signatures):\n%s\n", s.Secret)
	}
	return nil
}

// typesText shows a sink's event types; none means every type.
func typesText(types []string) string {
	if len(types) == 0 {
		return "all events"
	}
	return strings.Join(types, ",")
}

// sinksList is `events sinks list`.
func sinksList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var out struct {
		Sinks []apiSink `json:"sinks"`
	}
	cf, raw, err := listCommand(ctx, "event-sinks", args, stderr, &out)
	if err != nil {
		return err
	}
	if cf.json {
		printJSON(stdout, raw)
		return nil
	}
	t := newTable(stdout, "ID", "KIND", "URL", "SUBJECT", "TYPES", "ENABLED", "CREATED")
	for _, s := range out.Sinks {
		subject := s.Subject
		if s.Kind != "nats" {
			subject = ""
		}
		t.row(s.ID, s.Kind, s.URL, subject, typesText(s.Types), strconv.FormatBool(s.Enabled), fmtTime(&s.CreatedAt))
	}
	return t.flush()
}

// sinksRemove is `events sinks rm ID`.
func sinksRemove(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cf := newClientFlags("events sinks rm", stderr)
	pos, err := parseArgs(fs, args, 1, 1, "ID")
	if err != nil {
		return err
	}
	c, err := cf.newClient()
	if err != nil {
		return err
	}
	_, raw, err := c.call(ctx, request{method: http.MethodDelete, path: c.ws("event-sinks", pos[0])})
	if err != nil {
		return fmt.Errorf("remove sink %s: %w", pos[0], err)
	}
	if cf.json {
		if len(raw) == 0 {
			raw = jsonBody(map[string]any{"id": pos[0], "deleted": true})
		}
		printJSON(stdout, raw)
		return nil
	}
	fmt.Fprintf(stdout, "sink %s removed\n", pos[0])
	return nil
}

// eventsDeliveries is `events deliveries SINK [--status S]`: the sink's
// counts per status, then one page, newest first, with the cursor of the
// next on stderr.
func eventsDeliveries(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cf := newClientFlags("events deliveries", stderr)
	status := fs.String("status", "", "pending, delivered or failed (default all)")
	limit := fs.Int("limit", 0, "deliveries per page (default 50)")
	cursor := fs.String("cursor", "", "the next_cursor of a previous page")
	pos, err := parseArgs(fs, args, 1, 1, "SINK [--status pending|delivered|failed] [--limit N] [--cursor C]")
	if err != nil {
		return err
	}
	c, err := cf.newClient()
	if err != nil {
		return err
	}
	q := url.Values{"counts": {"1"}}
	if *status != "" {
		q.Set("status", *status)
	}
	if *limit > 0 {
		q.Set("limit", strconv.Itoa(*limit))
	}
	if *cursor != "" {
		q.Set("cursor", *cursor)
	}
	var out struct {
		Deliveries []apiDelivery `json:"deliveries"`
		NextCursor *string       `json:"next_cursor"`
		Counts     struct {
			Pending, Delivered, Failed int
		} `json:"counts"`
	}
	_, raw, err := c.callJSON(ctx, request{method: http.MethodGet, path: c.ws("event-sinks", pos[0], "deliveries"), query: q}, &out)
	if err != nil {
		return fmt.Errorf("list deliveries of sink %s: %w", pos[0], err)
	}
	if cf.json {
		printJSON(stdout, raw)
		return nil
	}
	fmt.Fprintf(stdout, "sink %s: %d delivered, %d pending, %d failed\n", pos[0],
		out.Counts.Delivered, out.Counts.Pending, out.Counts.Failed)
	t := newTable(stdout, "SEQ", "EVENT", "TYPE", "SUBJECT", "STATUS", "ATTEMPTS", "NEXT ATTEMPT", "DELIVERED", "LAST ERROR")
	for _, d := range out.Deliveries {
		next := ""
		if d.Status == "pending" {
			next = fmtTime(d.NextAttemptAt)
		}
		t.row(strconv.FormatInt(d.Seq, 10), d.EventID, d.Type, d.Subject, d.Status, strconv.Itoa(d.Attempts),
			next, fmtTime(d.DeliveredAt), d.LastError)
	}
	if err := t.flush(); err != nil {
		return err
	}
	if out.NextCursor != nil {
		fmt.Fprintf(stderr, "more: --cursor %s\n", *out.NextCursor)
	}
	return nil
}
