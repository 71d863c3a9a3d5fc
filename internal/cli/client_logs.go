package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// errNotSSE says the server answered ?follow=1 without an event stream
// (an older server): the caller falls back to polling.
var errNotSSE = errors.New("the server does not stream logs")

// sseEvent is one server-sent event.
type sseEvent struct {
	id, event, data string
}

// readSSE reads server-sent events from r and hands each to fn until fn
// says stop, r ends (nil) or reading fails. Multi-line data is joined with
// "\n" as the SSE format says; comment lines (keep-alives) are skipped.
func readSSE(r io.Reader, fn func(sseEvent) (stop bool)) error {
	br := bufio.NewReader(r)
	var ev sseEvent
	var data []string
	hasData := false
	for {
		line, err := br.ReadString('\n')
		if err != nil && (err != io.EOF || line == "") {
			if err == io.EOF {
				return nil
			}
			return err
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line == "" {
			if hasData || ev.event != "" {
				ev.data = strings.Join(data, "\n")
				if fn(ev) {
					return nil
				}
			}
			ev, data, hasData = sseEvent{}, nil, false
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.id = value
		case "event":
			ev.event = value
		case "data":
			data, hasData = append(data, value), true
		}
	}
}

// logStream follows a job's logs over SSE, reconnecting from the last
// event id when the stream breaks.
type logStream struct {
	c       *client
	id      string
	w       io.Writer
	lastSeq int64 // highest log event id written; -1 for none
}

// followLogs writes a job's logs to w until the job ends and returns its
// final status. It uses the SSE stream of GET …/logs?follow=1 and falls
// back to polling the logs and the result when the server has no stream.
func (c *client) followLogs(ctx context.Context, id string, w io.Writer) (string, error) {
	ls := &logStream{c: c, id: id, w: w, lastSeq: -1}
	failures := 0
	for {
		before := ls.lastSeq
		status, err := ls.once(ctx)
		var apiErr *APIError
		switch {
		case err == nil && status != "":
			return status, nil
		case ctx.Err() != nil:
			return "", ctx.Err()
		case errors.Is(err, errNotSSE):
			return c.pollLogs(ctx, id, w)
		case errors.As(err, &apiErr) && !apiErr.transient(): // the server refused: retrying would not help
			return "", err
		}
		if ls.lastSeq != before {
			failures = 0
		}
		failures++
		if failures > 5 {
			return "", fmt.Errorf("log stream of job %s keeps breaking: %w", id, err)
		}
		if err := sleepCtx(ctx, time.Duration(failures)*200*time.Millisecond); err != nil {
			return "", err
		}
	}
}

// once reads one connection of the stream: the final status when the end
// event came, "" and an error when the stream broke first.
func (ls *logStream) once(ctx context.Context) (string, error) {
	hdr := map[string]string{"Accept": "text/event-stream"}
	if ls.lastSeq >= 0 {
		hdr["Last-Event-ID"] = strconv.FormatInt(ls.lastSeq, 10)
	}
	res, err := ls.c.send(ctx, request{method: http.MethodGet, path: ls.c.ws("jobs", ls.id, "logs"),
		query: url.Values{"follow": {"1"}}, header: hdr})
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "text/event-stream" {
		return "", errNotSSE
	}
	var status string
	var werr error
	err = readSSE(res.Body, func(ev sseEvent) bool {
		switch ev.event {
		case "log", "":
			werr = ls.write(ev)
			return werr != nil
		case "end":
			status = endStatus(ev.data)
			return true
		}
		return false
	})
	if werr != nil {
		return "", fmt.Errorf("write logs: %w", werr)
	}
	if status != "" {
		return status, nil
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return "", fmt.Errorf("log stream of job %s: %w", ls.id, err)
}

// write writes a log event unless a reconnect replayed it.
func (ls *logStream) write(ev sseEvent) error {
	if seq, err := strconv.ParseInt(ev.id, 10, 64); err == nil {
		if seq <= ls.lastSeq {
			return nil
		}
		ls.lastSeq = seq
	}
	_, err := io.WriteString(ls.w, ev.data)
	return err
}

// endStatus reads the end event's {"status":…}; a malformed one still
// ends the stream.
func endStatus(data string) string {
	var end struct {
		Status string `json:"status"`
	}
	if json.Unmarshal([]byte(data), &end) != nil || end.Status == "" {
		return "ended"
	}
	return end.Status
}

// pollLogs is followLogs without a stream: it reads the logs text and the
// result in turn, writing only what is new, until the job has finished.
func (c *client) pollLogs(ctx context.Context, id string, w io.Writer) (string, error) {
	written := 0
	flush := func() error {
		_, text, err := c.call(ctx, request{method: http.MethodGet, path: c.ws("jobs", id, "logs")})
		if err != nil {
			return err
		}
		if len(text) > written {
			if _, err := w.Write(text[written:]); err != nil {
				return fmt.Errorf("write logs: %w", err)
			}
			written = len(text)
		}
		return nil
	}
	interval := 100 * time.Millisecond
	for {
		if err := flush(); err != nil {
			return "", err
		}
		o, _, err := c.result(ctx, id)
		if err != nil {
			return "", err
		}
		if o.terminal() {
			return o.Status, flush()
		}
		if err := sleepCtx(ctx, interval); err != nil {
			return "", err
		}
		interval = min(interval*2, time.Second)
	}
}

// lockedWriter lets the log stream and the status watcher share stderr
// without interleaving inside a write.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
