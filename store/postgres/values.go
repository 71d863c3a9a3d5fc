package postgres

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/windforce/windforce/spine"
)

// timeArg passes a time to SQL: NULL when zero, so the query falls back to
// the database clock (coalesce(@now::timestamptz, now())). pgx sends
// microseconds, truncating, which is the precision Postgres stores.
func timeArg(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// jsonArg passes raw JSON to a jsonb parameter: NULL when empty.
func jsonArg(v json.RawMessage) any {
	if len(v) == 0 {
		return nil
	}
	return string(v)
}

// compactJSON undoes jsonb's re-spacing ({"a": 1} comes back for {"a":1}),
// so a job's input and result read back as compact JSON, as SQLite keeps
// them. NULL stays nil.
func compactJSON(v []byte) json.RawMessage {
	if v == nil {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return json.RawMessage(v)
	}
	return json.RawMessage(buf.Bytes())
}

// retryPolicy rebuilds the pinned retry policy from its columns.
func retryPolicy(maxAttempts int, backoffMS int64, factor float64) spine.RetryPolicy {
	return spine.RetryPolicy{
		MaxAttempts: maxAttempts,
		Backoff:     time.Duration(backoffMS) * time.Millisecond,
		Factor:      factor,
	}
}

// ptrTime turns a nullable timestamp into *time.Time.
func ptrTime(t *time.Time) *time.Time {
	if t == nil || t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// limitCols receives the three nullable limit columns; NULL reads back as
// the zero "not set".
type limitCols struct {
	memory *int64
	pids   *int
	cpu    *float64
}

// pinCols receives a job's nullable env and warm columns.
type pinCols struct {
	env, warm *string
}

// apply sets the pin's env and warm from what was scanned.
func (c pinCols) apply(p *spine.Pin) error {
	var err error
	if p.Env, err = spine.ParseEnvColumn(c.env); err != nil {
		return err
	}
	p.Warm, err = spine.ParseWarmColumn(c.warm)
	return err
}

// limits is what was scanned.
func (c limitCols) limits() spine.Limits {
	var l spine.Limits
	if c.memory != nil {
		l.Memory = *c.memory
	}
	if c.pids != nil {
		l.Pids = *c.pids
	}
	if c.cpu != nil {
		l.CPU = *c.cpu
	}
	return l
}
