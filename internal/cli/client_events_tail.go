package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/windforce/windforce/events"
)

// eventsTail is `events tail`: it follows GET …/events?follow=1 and
// prints one line per event (or, with --json, the CloudEvent), until
// interrupted. A broken stream is opened again from the last seq printed,
// so nothing is skipped and nothing printed twice.
func eventsTail(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cf := newClientFlags("events tail", stderr)
	types := fs.String("type", "", "only these event types, comma separated: job.succeeded,job.failed")
	after := fs.Int64("after", -1, "start after this seq (default: new events only)")
	all := fs.Bool("all", false, "start from the oldest event still kept")
	if _, err := parseArgs(fs, args, 0, 0, "[--json] [--type a,b] [--after SEQ | --all]"); err != nil {
		return err
	}
	if *all && *after >= 0 {
		return &UsageError{Msg: "--all and --after exclude each other"}
	}
	c, err := cf.newClient()
	if err != nil {
		return err
	}
	t := &eventTail{c: c, w: stdout, json: cf.json, types: *types, after: "now"}
	switch {
	case *all:
		t.after = "0"
	case *after >= 0:
		t.after = strconv.FormatInt(*after, 10)
	}
	return t.run(ctx)
}

// eventTail is one `events tail`: where it is and how it prints.
type eventTail struct {
	c     *client
	w     io.Writer
	json  bool
	types string
	// after is the ?after= of the next connection: "now", or the last
	// seq printed.
	after string
	// last is the highest seq printed (0: none): a reconnect that replays
	// an event does not print it twice.
	last int64
}

// tailEvent is what a line shows of a CloudEvent.
type tailEvent struct {
	Seq     int64           `json:"seq"`
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Subject string          `json:"subject"`
	Time    time.Time       `json:"time"`
	Data    json.RawMessage `json:"data"`
}

// run reconnects until ctx ends or the server refuses; five breaks in a
// row without an event in between give up.
func (t *eventTail) run(ctx context.Context) error {
	failures := 0
	for {
		printed, err := t.once(ctx)
		var apiErr *APIError
		switch {
		case ctx.Err() != nil:
			return nil // interrupted: the normal end of a tail
		case errors.As(err, &apiErr) && !apiErr.transient():
			return fmt.Errorf("follow events: %w", err)
		case errors.Is(err, errNotSSE):
			return fmt.Errorf("follow events: %w", err)
		}
		if printed {
			failures = 0
		}
		failures++
		if failures > 5 {
			return fmt.Errorf("event stream keeps breaking: %w", err)
		}
		if err := sleepCtx(ctx, time.Duration(failures)*200*time.Millisecond); err != nil {
			return nil
		}
	}
}

// once reads one connection and reports whether it printed anything.
func (t *eventTail) once(ctx context.Context) (bool, error) {
	q := url.Values{"follow": {"1"}, "after": {t.after}}
	if t.types != "" {
		q.Set("type", t.types)
	}
	res, err := t.c.send(ctx, request{method: http.MethodGet, path: t.c.ws("events"), query: q,
		header: map[string]string{"Accept": "text/event-stream"}})
	if err != nil {
		return false, err
	}
	defer res.Body.Close()
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "text/event-stream" {
		return false, errNotSSE
	}
	printed := false
	var werr error
	err = readSSE(res.Body, func(ev sseEvent) bool {
		werr = t.print(ev)
		printed = printed || (werr == nil && ev.event != "ready")
		return werr != nil
	})
	if werr != nil {
		return printed, fmt.Errorf("print event: %w", werr)
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return printed, fmt.Errorf("event stream: %w", err)
}

// print writes one event and remembers its seq for the reconnect. The
// stream's first event, "ready", prints nothing: its id is where the
// stream starts ("now" resolved), kept so a reconnect misses nothing.
func (t *eventTail) print(ev sseEvent) error {
	if ev.event == "ready" {
		if _, err := strconv.ParseInt(ev.id, 10, 64); err == nil {
			t.after = ev.id
		}
		return nil
	}
	var e tailEvent
	if err := json.Unmarshal([]byte(ev.data), &e); err != nil {
		return fmt.Errorf("event %s is not CloudEvents JSON: %w", ev.id, err)
	}
	if e.Seq == 0 {
		e.Seq, _ = strconv.ParseInt(ev.id, 10, 64)
	}
	if e.Seq <= t.last {
		return nil
	}
	t.last = e.Seq
	t.after = strconv.FormatInt(e.Seq, 10)
	if t.json {
		_, err := fmt.Fprintln(t.w, ev.data)
		return err
	}
	_, err := fmt.Fprintf(t.w, "%d  %s  %-24s %s%s\n", e.Seq, e.Time.Local().Format("15:04:05.000"), e.Type, e.Subject, summary(e.Data))
	return err
}

// summary is the part of an event's data worth a glance: a job's app and
// action, status and error message; a source's commit and error.
func summary(data json.RawMessage) string {
	g, ok := events.GlanceOf(data)
	if !ok {
		return ""
	}
	s := ""
	if g.App != "" {
		s += "  " + g.App + "/" + g.Action
	}
	if g.Status != "" {
		s += "  " + g.Status
	}
	if g.Commit != "" {
		s += "  " + shortSHA(g.Commit)
	}
	if g.Error != "" {
		s += "  " + strconv.Quote(g.Error)
	}
	return s
}
