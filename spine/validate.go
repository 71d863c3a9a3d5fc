package spine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// DefaultTag is the routing tag of a job whose pin names none.
const DefaultTag = "default"

// PrepareEnqueue checks one enqueue request and fills its defaults (id,
// tag, retry policy, scheduled_for). Both stores call it first, so a bad
// request is refused the same way everywhere and writes no row. now is the
// enqueue time the store resolved.
func PrepareEnqueue(p EnqueueParams, now time.Time) (EnqueueParams, error) {
	if p.Workspace == "" {
		return p, fmt.Errorf("%w: workspace is empty", ErrInvalid)
	}
	if p.Pin.AppKey == "" || p.Pin.ActionKey == "" {
		return p, fmt.Errorf("%w: app and action are required", ErrInvalid)
	}
	if !p.TriggerKind.Valid() {
		return p, fmt.Errorf("%w: unknown trigger kind %q", ErrInvalid, p.TriggerKind)
	}
	input, err := checkJSON("input", p.Input)
	if err != nil {
		return p, err
	}
	p.Input = input
	p.Pin.Env = SortEnv(slices.Clone(p.Pin.Env))
	if err := CheckEnv(p.Pin.Env); err != nil {
		return p, err
	}
	if err := CheckWarm(p.Pin.Warm); err != nil {
		return p, err
	}
	if p.ID == uuid.Nil {
		if p.ID, err = uuid.NewV7(); err != nil {
			return p, fmt.Errorf("generate job id: %w", err)
		}
	}
	if p.Pin.Tag == "" {
		p.Pin.Tag = DefaultTag
	}
	p.Pin.Retry = p.Pin.Retry.normalized()
	if p.ScheduledFor.IsZero() {
		p.ScheduledFor = now
	}
	if p.Now.IsZero() {
		p.Now = now
	}
	return p, nil
}

// checkJSON refuses what the databases cannot store faithfully: invalid
// JSON, invalid UTF-8, the NUL character and lone UTF-16 surrogates
// (Postgres jsonb refuses both escapes; SQLite would keep them). An empty
// value becomes null.
func checkJSON(what string, v json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(v)) == 0 {
		return json.RawMessage("null"), nil
	}
	if !utf8.Valid(v) {
		return nil, fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalid, what)
	}
	if !json.Valid(v) {
		return nil, fmt.Errorf("%w: %s is not valid JSON", ErrInvalid, what)
	}
	if err := CheckText(what, v); err != nil {
		return nil, err
	}
	return v, nil
}

// CheckResult applies the input rules to a job's result before it is
// stored.
func CheckResult(v json.RawMessage) (json.RawMessage, error) {
	return checkJSON("result", v)
}
