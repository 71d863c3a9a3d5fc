package catalog

import (
	"fmt"
	"time"

	"github.com/windforce/windforce/spine"
)

// Overrides are an action's overrides of its app's values as a store
// keeps them: one nullable column each, nil (NULL) where the action keeps
// its app's value. Both databases write an action's columns with
// OverridesOf and read them back with Apply, so the rule is written once.
type Overrides struct {
	TimeoutMS     *int64
	Tag           *string
	MaxAttempts   *int
	BackoffMS     *int64
	BackoffFactor *float64
	LimitMemory   *int64
	LimitPids     *int
	LimitCPU      *float64
	// Env is the action's own variables as JSON text (spine.EnvColumn).
	Env *string
	// Warm is the action's warm policy as JSON text (spine.WarmColumn),
	// or "false" for Cold().
	Warm *string
}

// coldColumn is Cold in an action's warm column.
const coldColumn = "false"

// OverridesOf is the columns a store writes for a: a zero Timeout, an
// empty Tag, a nil Retry, each zero field of Limits, an empty Env and a
// nil Warm are NULL.
func OverridesOf(a Action) Overrides {
	var o Overrides
	if a.Timeout > 0 {
		ms := a.Timeout.Milliseconds()
		o.TimeoutMS = &ms
	}
	if a.Tag != "" {
		o.Tag = &a.Tag
	}
	if r := a.Retry; r != nil {
		backoff := r.Backoff.Milliseconds()
		o.MaxAttempts, o.BackoffMS, o.BackoffFactor = &r.MaxAttempts, &backoff, &r.Factor
	}
	if a.Limits.Memory > 0 {
		o.LimitMemory = &a.Limits.Memory
	}
	if a.Limits.Pids > 0 {
		o.LimitPids = &a.Limits.Pids
	}
	if a.Limits.CPU > 0 {
		o.LimitCPU = &a.Limits.CPU
	}
	o.Env = spine.EnvColumn(a.Env)
	if IsCold(a.Warm) {
		cold := coldColumn
		o.Warm = &cold
	} else {
		o.Warm = spine.WarmColumn(a.Warm)
	}
	return o
}

// Apply sets a's timeout, tag, retry, limits, env and warm from the columns o, the
// inverse of OverridesOf: a NULL column is the zero value, which Pin reads
// as "the app's value". A retry policy overrides the app's only when all
// three of its columns are set; a partial one is the app's. The error is
// an env or warm column that is not what OverridesOf writes.
func (o Overrides) Apply(a *Action) error {
	a.Timeout, a.Tag, a.Retry, a.Limits, a.Env, a.Warm = 0, "", nil, spine.Limits{}, nil, nil
	if o.TimeoutMS != nil {
		a.Timeout = time.Duration(*o.TimeoutMS) * time.Millisecond
	}
	if o.Tag != nil {
		a.Tag = *o.Tag
	}
	if o.MaxAttempts != nil && o.BackoffMS != nil && o.BackoffFactor != nil {
		a.Retry = &spine.RetryPolicy{
			MaxAttempts: *o.MaxAttempts,
			Backoff:     time.Duration(*o.BackoffMS) * time.Millisecond,
			Factor:      *o.BackoffFactor,
		}
	}
	if o.LimitMemory != nil {
		a.Limits.Memory = *o.LimitMemory
	}
	if o.LimitPids != nil {
		a.Limits.Pids = *o.LimitPids
	}
	if o.LimitCPU != nil {
		a.Limits.CPU = *o.LimitCPU
	}
	var err error
	if a.Env, err = spine.ParseEnvColumn(o.Env); err != nil {
		return fmt.Errorf("action %s: %w", a.Key, err)
	}
	if o.Warm != nil && *o.Warm == coldColumn {
		a.Warm = Cold()
	} else if a.Warm, err = spine.ParseWarmColumn(o.Warm); err != nil {
		return fmt.Errorf("action %s: %w", a.Key, err)
	}
	return nil
}
