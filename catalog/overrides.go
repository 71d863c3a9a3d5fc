package catalog

import (
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
}

// OverridesOf is the columns a store writes for a: a zero Timeout, an
// empty Tag, a nil Retry and each zero field of Limits are NULL.
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
	return o
}

// Apply sets a's timeout, tag, retry and limits from the columns o, the
// inverse of OverridesOf: a NULL column is the zero value, which Pin reads
// as "the app's value". A retry policy overrides the app's only when all
// three of its columns are set; a partial one is the app's.
func (o Overrides) Apply(a *Action) {
	a.Timeout, a.Tag, a.Retry, a.Limits = 0, "", nil, spine.Limits{}
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
}
