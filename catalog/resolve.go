package catalog

import (
	"fmt"
	"slices"

	"github.com/windforce/windforce/spine"
)

// Pin is the execution metadata a job of (app, action) carries: the
// action's overrides where it has them, the app's values otherwise.
func Pin(app App, action Action) spine.Pin {
	p := spine.Pin{
		GitSourceID:  app.SourceID,
		CommitSHA:    app.CommitSHA,
		AppKey:       app.Key,
		ActionKey:    action.Key,
		Entrypoint:   app.Entrypoint,
		Runtime:      app.Runtime,
		InputSchema:  action.InputSchema,
		OutputSchema: action.OutputSchema,
		Timeout:      app.Timeout,
		Tag:          app.Tag,
		Retry:        app.Retry,
		Limits:       MergeLimits(app.Limits, action.Limits),
		Env:          MergeEnv(app.Env, action.Env),
		Warm:         MergeWarm(app.Warm, action.Warm),
	}
	if action.Timeout > 0 {
		p.Timeout = action.Timeout
	}
	if action.Tag != "" {
		p.Tag = action.Tag
	}
	if action.Retry != nil {
		p.Retry = *action.Retry
	}
	return p
}

// MergeLimits is the limits a job of an action pins: each field the action
// sets, the app's value for the others (zero where neither sets it, so the
// worker's default applies).
func MergeLimits(app, action spine.Limits) spine.Limits {
	l := app
	if action.Memory > 0 {
		l.Memory = action.Memory
	}
	if action.Pids > 0 {
		l.Pids = action.Pids
	}
	if action.CPU > 0 {
		l.CPU = action.CPU
	}
	return l
}

// MergeEnv is the environment a job of an action pins: the app's
// variables with the action's over them, name by name, sorted by name;
// nil when both are empty. Neither input is changed.
func MergeEnv(app, action []spine.EnvVar) []spine.EnvVar {
	if len(action) == 0 {
		return spine.SortEnv(slices.Clone(app))
	}
	out := make([]spine.EnvVar, 0, len(app)+len(action))
	for _, v := range app {
		if !slices.ContainsFunc(action, func(a spine.EnvVar) bool { return a.Name == v.Name }) {
			out = append(out, v)
		}
	}
	return spine.SortEnv(append(out, action...))
}

// MergeWarm is the warm policy a job of an action pins: the action's when
// it sets one (nil for Cold), the app's otherwise. The result is a copy.
func MergeWarm(app, action *spine.Warm) *spine.Warm {
	w := app
	if action != nil {
		w = action
	}
	if w == nil || IsCold(w) {
		return nil
	}
	c := *w
	return &c
}

// Resolve turns a request into the spine's enqueue parameters for (app,
// action) as the catalog holds them now: it validates the input against
// the input schema and pins the app and action. Both stores call it inside
// their enqueue transaction.
func Resolve(r EnqueueRequest, app App, action Action) (spine.EnqueueParams, error) {
	if err := ValidateInput(action.InputSchema, r.Input); err != nil {
		return spine.EnqueueParams{}, fmt.Errorf("enqueue %s/%s: %w", r.App, r.Action, err)
	}
	return spine.EnqueueParams{
		ID:           r.ID,
		Workspace:    r.Workspace,
		TriggerKind:  r.TriggerKind,
		TriggerRef:   r.TriggerRef,
		CreatedBy:    r.CreatedBy,
		Input:        r.Input,
		Pin:          Pin(app, action),
		Priority:     r.Priority,
		ScheduledFor: r.ScheduledFor,
		CoalesceKey:  r.CoalesceKey,
		Now:          r.Now,
		Unsynced:     r.Unsynced,
	}, nil
}

// NotFound is the error of an enqueue naming an app or action the
// workspace does not have.
func NotFound(workspace, app, action string) error {
	if action == "" {
		return fmt.Errorf("%w: app %q in workspace %q", ErrNotFound, app, workspace)
	}
	return fmt.Errorf("%w: action %q of app %q in workspace %q", ErrNotFound, action, app, workspace)
}
