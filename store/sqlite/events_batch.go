package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/google/uuid"
	msqlite "modernc.org/sqlite"
)

// jobEventsFunc is the aggregate events_jobs.sql writes a job row's jobs
// column with (migration 0021): one JSON array per event, in the order of
// its first argument (the job's place in the statement's list), of the
// other arguments in the migration's order. SQLite's own json_array and
// string concatenation were most of that statement's time (each string
// escaped or copied byte by byte, each piece allocated); here each row is
// appended to one buffer.
const jobEventsFunc = "windforce_job_events"

// jobEventFields is how many state fields an event of a job row holds;
// jobEventRaw marks those that are JSON already and go in as they are.
const jobEventFields = 19

// jobEventRaw: result (12), error (13) and last_error (14) are checked JSON
// text (job_queue's and job_completed's CHECKs); secrets (17) is the job's
// JSON array, validated here (its column has no CHECK).
var jobEventRaw = [jobEventFields]bool{12: true, 13: true, 14: true, 17: true}

// What an event's array leaves out (migration 0021): scheduled_for,
// started_at and completed_at are stored as microseconds from the event's
// time (a few digits instead of sixteen), and the fields after
// generation that hold their default (null, "" or []) are dropped from
// the end: the readers take a missing field as its default.
var (
	jobEventOffsets = [...]int{5, 6, 7}
	jobEventKept    = 11 // generation: the last field always written
	jobEventDefault = [jobEventFields]driver.Value{12: nil, 13: nil, 14: nil, 15: "", 16: "", 17: "[]", 18: nil}
)

func init() {
	msqlite.MustRegisterFunction(jobEventsFunc, &msqlite.FunctionImpl{
		NArgs:         1 + jobEventFields,
		Deterministic: true,
		// Step copies every argument into its buffer and keeps none.
		VolatileArgs:  true,
		MakeAggregate: func(msqlite.FunctionContext) (msqlite.AggregateFunction, error) { return &jobEventsAgg{}, nil },
	})
}

// jobEventsAgg is one evaluation of jobEventsFunc.
type jobEventsAgg struct {
	buf   []byte
	items []jobEventItem
}

// jobEventItem is one event's array in buf, with its place.
type jobEventItem struct {
	key        int64
	start, end int
}

// Step appends one event's array.
func (a *jobEventsAgg) Step(_ *msqlite.FunctionContext, args []driver.Value) error {
	key, ok := args[0].(int64)
	if !ok {
		return fmt.Errorf("%s: want an integer place, got %T", jobEventsFunc, args[0])
	}
	var fields [jobEventFields]driver.Value // args stays as SQLite gave it
	copy(fields[:], args[1:])
	at, ok := fields[2].(int64)
	if !ok {
		return fmt.Errorf("%s: want an integer time, got %T", jobEventsFunc, fields[2])
	}
	for _, i := range jobEventOffsets {
		if t, ok := fields[i].(int64); ok {
			fields[i] = t - at
		}
	}
	last := len(fields) - 1
	for last > jobEventKept && fields[last] == jobEventDefault[last] {
		last--
	}
	start := len(a.buf)
	a.buf = append(a.buf, '[')
	for i, v := range fields[:last+1] {
		if i > 0 {
			a.buf = append(a.buf, ',')
		}
		var err error
		if a.buf, err = appendJSONValue(a.buf, v, jobEventRaw[i], i == 17); err != nil {
			return fmt.Errorf("%s: field %d: %w", jobEventsFunc, i, err)
		}
	}
	a.buf = append(a.buf, ']')
	a.items = append(a.items, jobEventItem{key: key, start: start, end: len(a.buf)})
	return nil
}

// WindowInverse: jobEventsFunc is no window function.
func (a *jobEventsAgg) WindowInverse(*msqlite.FunctionContext, []driver.Value) error {
	return fmt.Errorf("%s is not a window function", jobEventsFunc)
}

// WindowValue is the JSON array of the events by place; NULL for none.
func (a *jobEventsAgg) WindowValue(*msqlite.FunctionContext) (driver.Value, error) {
	if len(a.items) == 0 {
		return nil, nil
	}
	slices.SortFunc(a.items, func(x, y jobEventItem) int { return cmp.Compare(x.key, y.key) })
	out := make([]byte, 1, len(a.buf)+len(a.items)+1)
	out[0] = '['
	for i, it := range a.items {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, a.buf[it.start:it.end]...)
	}
	return string(append(out, ']')), nil
}

// Final keeps nothing to release.
func (a *jobEventsAgg) Final(*msqlite.FunctionContext) {}

// appendJSONValue appends v as JSON: NULL as null, numbers as numbers, a
// text quoted, or as it is when raw (JSON already; checked first when
// check).
func appendJSONValue(b []byte, v driver.Value, raw, check bool) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case float64:
		return strconv.AppendFloat(b, v, 'g', -1, 64), nil
	case string:
		if !raw {
			return appendJSONString(b, v), nil
		}
		if check && !json.Valid([]byte(v)) {
			return b, fmt.Errorf("not JSON: %.40q", v)
		}
		return append(b, v...), nil
	case []byte:
		return appendJSONValue(b, string(v), raw, check)
	default:
		return b, fmt.Errorf("unexpected %T", v)
	}
}

// appendJSONString appends s as a JSON string: plain ASCII as it is,
// anything else through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// jobGroups is a statement's job ids by workspace, each workspace in the
// order of its first job: events_jobs.sql writes one row per workspace.
type jobGroups struct {
	order []string
	ids   map[string][]uuid.UUID
}

// add puts id in workspace's group.
func (g *jobGroups) add(workspace string, id uuid.UUID) {
	if g.ids == nil {
		g.ids = map[string][]uuid.UUID{}
	}
	if _, ok := g.ids[workspace]; !ok {
		g.order = append(g.order, workspace)
	}
	g.ids[workspace] = append(g.ids[workspace], id)
}

// oneWorkspace is the group of ids all in workspace.
func oneWorkspace(workspace string, ids ...uuid.UUID) jobGroups {
	return jobGroups{order: []string{workspace}, ids: map[string][]uuid.UUID{workspace: ids}}
}

// jobEventState is one job event of an outbox row as the batch paths
// (claim, enqueue batch, batch completion) build it in Go from what their
// own statements wrote and returned: the job_event view's state of the job
// after the change (migration 0021's order), without reading the view
// back. TestEventsOfEveryTransition holds the two equal.
type jobEventState struct {
	id           uuid.UUID
	typ          string
	at           int64
	status       string
	priority     int64
	scheduledFor sql.NullInt64
	startedAt    sql.NullInt64
	completedAt  sql.NullInt64
	worker       string
	attempt      int64
	restarts     int64
	generation   int64
	// result, errorJSON and lastError are JSON text (NULL: null);
	// secrets the job's JSON array (NULL: []).
	result, errorJSON, lastError sql.NullString
	canceledBy, canceledReason   string
	secrets                      sql.NullString
	supersededBy                 sql.NullString
}

// appendJSON appends s's array (migration 0021's order), typed: no
// field is boxed on the one writer's path.
func (s *jobEventState) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `["`...)
	b = appendUUID(b, s.id)
	b = append(b, `",`...)
	b = appendJSONString(b, s.typ)
	b = appendInts(b, s.at)
	b = append(b, ',')
	b = appendJSONString(b, s.status)
	b = appendInts(b, s.priority)
	b = appendNullInts(b, s.at, s.scheduledFor, s.startedAt, s.completedAt)
	b = append(b, ',')
	b = appendJSONString(b, s.worker)
	b = appendInts(b, s.attempt, s.restarts, s.generation)
	// the rest up to the last that is not its default (jobEventDefault)
	secrets := s.secrets.Valid && s.secrets.String != "[]"
	last := jobEventKept
	for i, set := range [...]bool{s.result.Valid, s.errorJSON.Valid, s.lastError.Valid, s.canceledBy != "",
		s.canceledReason != "", secrets, s.supersededBy.Valid} {
		if set {
			last = jobEventKept + 1 + i
		}
	}
	for i, raw := range [...]sql.NullString{s.result, s.errorJSON, s.lastError} {
		if jobEventKept+1+i <= last {
			b = appendRaw(append(b, ','), raw)
		}
	}
	if last >= 15 {
		b = appendJSONString(append(b, ','), s.canceledBy)
	}
	if last >= 16 {
		b = appendJSONString(append(b, ','), s.canceledReason)
	}
	if last >= 17 {
		b = append(b, ',')
		switch {
		case !secrets:
			b = append(b, "[]"...)
		case json.Valid([]byte(s.secrets.String)): // its column has no CHECK
			b = append(b, s.secrets.String...)
		default:
			return b, fmt.Errorf("event of job %s: secrets not JSON: %.40q", s.id, s.secrets.String)
		}
	}
	if last >= 18 {
		b = appendJSONString(append(b, ','), s.supersededBy.String)
	}
	return append(b, ']'), nil
}

// appendUUID appends id's canonical text.
func appendUUID(b []byte, id uuid.UUID) []byte {
	var t [36]byte
	hex.Encode(t[0:8], id[0:4])
	hex.Encode(t[9:13], id[4:6])
	hex.Encode(t[14:18], id[6:8])
	hex.Encode(t[19:23], id[8:10])
	hex.Encode(t[24:36], id[10:16])
	t[8], t[13], t[18], t[23] = '-', '-', '-', '-'
	return append(b, t[:]...)
}

// appendInts appends each of vs after a comma.
func appendInts(b []byte, vs ...int64) []byte {
	for _, v := range vs {
		b = strconv.AppendInt(append(b, ','), v, 10)
	}
	return b
}

// appendNullInts appends each of vs after a comma as microseconds from
// at (jobEventOffsets), NULL as null.
func appendNullInts(b []byte, at int64, vs ...sql.NullInt64) []byte {
	for _, v := range vs {
		b = append(b, ',')
		if v.Valid {
			b = strconv.AppendInt(b, v.Int64-at, 10)
		} else {
			b = append(b, "null"...)
		}
	}
	return b
}

// appendRaw appends checked JSON text as it is, NULL as null.
func appendRaw(b []byte, v sql.NullString) []byte {
	if !v.Valid {
		return append(b, "null"...)
	}
	return append(b, v.String...)
}

// jobRowEvents writes states, all of workspace, as one outbox row, in
// their order (events_job_row.sql); nothing while workspace has no sink.
func (w *writeTx) jobRowEvents(ctx context.Context, workspace string, states []jobEventState) error {
	if len(states) == 0 {
		return nil
	}
	b := make([]byte, 1, 256*len(states))
	b[0] = '['
	for i := range states {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = states[i].appendJSON(b); err != nil {
			return err
		}
	}
	b = append(b, ']')
	first := &states[0]
	if _, err := w.exec(ctx, qEventsJobRow, sql.Named("workspace", workspace), sql.Named("n", len(states)),
		sql.Named("type", first.typ), sql.Named("subject", first.id.String()), sql.Named("time", first.at),
		sql.Named("jobs", string(b))); err != nil {
		return fmt.Errorf("write %d job events of workspace %s: %w", len(states), workspace, translate(err))
	}
	return nil
}

// recordsEvents reports whether workspace has a sink, so its transitions
// write events (events_recorded.sql).
func (w *writeTx) recordsEvents(ctx context.Context, workspace string) (bool, error) {
	var ok bool
	if err := w.queryRow(ctx, qEventsRecorded, sql.Named("workspace", workspace)).Scan(&ok); err != nil {
		return false, fmt.Errorf("does workspace %s record events: %w", workspace, translate(err))
	}
	return ok, nil
}
