package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/schedule"
)

// ScheduleView is the schedule shape of the API. next_runs previews the
// ticks to come (empty while disabled): the due tick first, then the ticks
// after now, as the scheduler will fire them.
type ScheduleView struct {
	ID        string          `json:"id"`
	Workspace string          `json:"workspace"`
	App       string          `json:"app"`
	Action    string          `json:"action"`
	Cron      string          `json:"cron"`
	Timezone  string          `json:"timezone"`
	Input     json.RawMessage `json:"input"`
	NoOverlap bool            `json:"no_overlap"`
	Enabled   bool            `json:"enabled"`
	NextRunAt time.Time       `json:"next_run_at"`
	LastRunAt *time.Time      `json:"last_run_at"`
	LastJobID *string         `json:"last_job_id"`
	CreatedBy string          `json:"created_by"`
	CreatedAt time.Time       `json:"created_at"`
	NextRuns  []time.Time     `json:"next_runs"`
}

func viewSchedule(sc schedule.Schedule, now time.Time) ScheduleView {
	v := ScheduleView{ID: sc.ID.String(), Workspace: sc.Workspace, App: sc.App, Action: sc.Action,
		Cron: sc.Cron, Timezone: sc.Timezone, Input: sc.Input, NoOverlap: sc.NoOverlap, Enabled: sc.Enabled,
		NextRunAt: sc.NextRunAt, LastRunAt: sc.LastRunAt, CreatedBy: sc.CreatedBy, CreatedAt: sc.CreatedAt,
		NextRuns: schedule.Upcoming(sc, now, schedule.PreviewRuns)}
	if sc.LastJobID != nil {
		id := sc.LastJobID.String()
		v.LastJobID = &id
	}
	return v
}

// listSchedules answers {"schedules":[…]}, oldest first.
func (s *Server) listSchedules(_ http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	list, err := s.cfg.Store.ListSchedules(r.Context(), r.PathValue("ws"))
	if err != nil {
		return nil, err
	}
	now := s.now()
	out := make([]ScheduleView, 0, len(list))
	for _, sc := range list {
		out = append(out, viewSchedule(sc, now))
	}
	return map[string]any{"schedules": out}, nil
}

// scheduleID parses the path's {id}; a malformed id names no schedule (404).
func scheduleID(r *http.Request) (uuid.UUID, error) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		return uuid.Nil, errorf(http.StatusNotFound, CodeNotFound, "no schedule %q in workspace %q", r.PathValue("id"), r.PathValue("ws"))
	}
	return id, nil
}

// getSchedule answers one schedule.
func (s *Server) getSchedule(_ http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	id, err := scheduleID(r)
	if err != nil {
		return nil, err
	}
	sc, err := s.cfg.Store.GetSchedule(r.Context(), r.PathValue("ws"), id)
	if err != nil {
		return nil, err
	}
	return viewSchedule(sc, s.now()), nil
}

// scheduleBody is the body of POST …/schedules.
type scheduleBody struct {
	App       string          `json:"app"`
	Action    string          `json:"action"`
	Cron      string          `json:"cron"`
	Timezone  string          `json:"timezone"`
	Input     json.RawMessage `json:"input"`
	NoOverlap bool            `json:"no_overlap"`
	Enabled   *bool           `json:"enabled"`
}

// createSchedule checks the cron expression and zone (400 naming the
// field), that the action exists (404) and that the input matches its
// input schema now (422), then stores the schedule: 201 with it. A refused
// request stores nothing.
func (s *Server) createSchedule(w http.ResponseWriter, r *http.Request, c *caller) (any, error) {
	var b scheduleBody
	if err := decodeOptional(w, r, s.cfg.MaxInputBytes, &b); err != nil {
		return nil, err
	}
	for _, f := range []struct{ name, value string }{{"app", b.App}, {"action", b.Action}, {"cron", b.Cron}} {
		if f.value == "" {
			return nil, fieldError(f.name, f.name+" is required")
		}
	}
	if _, err := schedule.ParseCron(b.Cron, b.Timezone); err != nil {
		return nil, specError(err)
	}
	ws := r.PathValue("ws")
	if len(bytes.TrimSpace(b.Input)) == 0 {
		b.Input = json.RawMessage(`{}`)
	}
	if err := s.checkAction(r, ws, b.App, b.Action, b.Input); err != nil {
		return nil, err
	}
	sc, err := schedule.New(schedule.Schedule{Workspace: ws, App: b.App, Action: b.Action, Cron: b.Cron,
		Timezone: b.Timezone, Input: b.Input, NoOverlap: b.NoOverlap, Enabled: b.Enabled == nil || *b.Enabled,
		CreatedBy: c.name()}, s.now())
	if err != nil {
		return nil, specError(err)
	}
	if err := s.cfg.Store.CreateSchedule(r.Context(), sc); err != nil {
		return nil, err
	}
	return &reply{status: http.StatusCreated, body: viewSchedule(sc, s.now())}, nil
}

// checkAction finds app/action in the catalog (404) and validates input
// against its input schema (422, like run).
func (s *Server) checkAction(r *http.Request, ws, app, action string, input json.RawMessage) error {
	a, err := s.cfg.Store.GetApp(r.Context(), ws, app)
	if err != nil {
		return err
	}
	for _, act := range a.Actions {
		if act.Key == action {
			return catalog.ValidateInput(act.InputSchema, input)
		}
	}
	return catalog.NotFound(ws, app, action)
}

// patchSchedule enables or disables a schedule ({"enabled": bool}).
// Enabling moves its tick to the first after now, so ticks missed while
// it was off do not fire.
func (s *Server) patchSchedule(w http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	var b struct {
		Enabled *bool `json:"enabled"`
	}
	if err := decodeOptional(w, r, s.cfg.MaxInputBytes, &b); err != nil {
		return nil, err
	}
	if b.Enabled == nil {
		return nil, fieldError("enabled", "enabled (true or false) is required")
	}
	id, err := scheduleID(r)
	if err != nil {
		return nil, err
	}
	ws := r.PathValue("ws")
	sc, err := s.cfg.Store.GetSchedule(r.Context(), ws, id)
	if err != nil {
		return nil, err
	}
	var next time.Time
	if *b.Enabled {
		c, err := schedule.ParseCron(sc.Cron, sc.Timezone)
		if err != nil {
			return nil, specError(err)
		}
		next = c.Next(s.now())
	}
	if err := s.cfg.Store.SetScheduleEnabled(r.Context(), ws, id, *b.Enabled, next); err != nil {
		return nil, err
	}
	if sc, err = s.cfg.Store.GetSchedule(r.Context(), ws, id); err != nil {
		return nil, err
	}
	return viewSchedule(sc, s.now()), nil
}

// deleteSchedule removes a schedule: 204. Its jobs stay.
func (s *Server) deleteSchedule(_ http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	id, err := scheduleID(r)
	if err != nil {
		return nil, err
	}
	if err := s.cfg.Store.DeleteSchedule(r.Context(), r.PathValue("ws"), id); err != nil {
		return nil, err
	}
	return &reply{status: http.StatusNoContent}, nil
}

// previewSchedule answers the next runs of ?cron= in ?timezone= from now,
// or 400 naming the field, for the console's form.
func (s *Server) previewSchedule(_ http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	q := r.URL.Query()
	c, err := schedule.ParseCron(q.Get("cron"), q.Get("timezone"))
	if err != nil {
		return nil, specError(err)
	}
	return map[string]any{"next_runs": c.NextN(s.now(), schedule.PreviewRuns)}, nil
}

// fieldError is a 400 naming the body field at fault.
func fieldError(field, message string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Message: message,
		Details: map[string]any{"field": field}}
}

// specError answers a bad cron expression or zone with 400 naming the
// field; other errors pass through to toAPIError.
func specError(err error) error {
	var se *schedule.SpecError
	if errors.As(err, &se) {
		e := fieldError(se.Field, se.Error())
		e.Err = err
		return e
	}
	return err
}
