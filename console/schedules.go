package console

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/schedule"
)

// scheduleForm is the create form's values and its errors per field.
type scheduleForm struct {
	Target    string // "app/action"
	Cron      string
	Timezone  string
	Input     string
	NoOverlap bool
	Errors    map[string]string
}

type schedulesData struct {
	Schedules []schedule.Schedule
	Targets   []string
	Form      scheduleForm
	Preview   previewData
	Flash     string
}

// previewData is the "next 5 runs" block.
type previewData struct {
	Runs     []time.Time
	Zone     string
	Location *time.Location
	Error    string
}

// Local shows t in the preview's zone.
func (p previewData) Local(t time.Time) string {
	if p.Location == nil {
		return fmtTime(t) + " UTC"
	}
	return t.In(p.Location).Format("Mon 2006-01-02 15:04:05 MST")
}

// schedulesPage lists the workspace's schedules and the create form.
func (c *Console) schedulesPage(q *req) error {
	f := scheduleForm{Cron: "*/5 * * * *", Input: "{}"}
	return c.showSchedules(q, http.StatusOK, schedulesData{Form: f, Flash: scheduleFlash[q.r.URL.Query().Get("done")]})
}

func (c *Console) showSchedules(q *req, status int, d schedulesData) error {
	list, err := c.cfg.Store.ListSchedules(q.r.Context(), q.ws)
	if err != nil {
		return err
	}
	d.Schedules = list
	apps, err := c.cfg.Store.ListApps(q.r.Context(), q.ws)
	if err != nil {
		return err
	}
	for _, a := range apps {
		for _, act := range a.Actions {
			d.Targets = append(d.Targets, a.Key+"/"+act.Key)
		}
	}
	d.Preview = preview(d.Form.Cron, d.Form.Timezone, c.now())
	c.render(q.w, status, "schedules", "", c.view(q, "Schedules", d))
	return nil
}

// preview computes the next runs of a cron expression in a zone.
func preview(spec, zone string, now time.Time) previewData {
	p := previewData{Zone: zone}
	if strings.TrimSpace(spec) == "" {
		return p
	}
	cr, err := schedule.ParseCron(spec, zone)
	if err != nil {
		p.Error = err.Error()
		return p
	}
	if zone != "" {
		p.Location, _ = time.LoadLocation(zone)
	}
	p.Runs = cr.NextN(now, schedule.PreviewRuns)
	return p
}

// schedulePreview answers the preview block for ?cron=&timezone= (htmx
// asks for it as the user types).
func (c *Console) schedulePreview(q *req) error {
	v := q.r.URL.Query()
	c.render(q.w, http.StatusOK, "schedules", "preview", preview(v.Get("cron"), strings.TrimSpace(v.Get("timezone")), c.now()))
	return nil
}

// createSchedule validates the form as the API would (cron and zone, the
// action exists, the input matches its schema) and stores the schedule.
// A bad form is shown again with each error next to its field; nothing
// is stored.
func (c *Console) createSchedule(q *req) error {
	r := q.r
	f := scheduleForm{Target: r.PostFormValue("target"), Cron: strings.TrimSpace(r.PostFormValue("cron")),
		Timezone: strings.TrimSpace(r.PostFormValue("timezone")), Input: r.PostFormValue("input"),
		NoOverlap: r.PostFormValue("no_overlap") != "", Errors: map[string]string{}}
	app, action, _ := strings.Cut(f.Target, "/")
	input := json.RawMessage(strings.TrimSpace(f.Input))
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	s, err := schedule.New(schedule.Schedule{Workspace: q.ws, App: app, Action: action, Cron: f.Cron, Timezone: f.Timezone,
		Input: input, NoOverlap: f.NoOverlap, Enabled: true, CreatedBy: q.u.name()}, c.now())
	var se *schedule.SpecError
	switch {
	case errors.As(err, &se):
		f.Errors[se.Field] = se.Err.Error()
	case err != nil && !json.Valid(input):
		f.Errors["input"] = "The input is not valid JSON."
	case err != nil:
		f.Errors["target"] = "Choose an action."
	}
	if len(f.Errors) == 0 {
		c.checkTarget(q, app, action, input, f.Errors)
	}
	if len(f.Errors) > 0 {
		return c.showSchedules(q, http.StatusUnprocessableEntity, schedulesData{Form: f})
	}
	if err := c.cfg.Store.CreateSchedule(r.Context(), s); err != nil {
		return err
	}
	redirect(q.w, q.r, "/w/"+url.PathEscape(q.ws)+"/schedules?done=created")
	return nil
}

// checkTarget checks that the action exists and that input matches its
// input schema, recording field errors.
func (c *Console) checkTarget(q *req, app, action string, input json.RawMessage, errs map[string]string) {
	a, err := c.cfg.Store.GetApp(q.r.Context(), q.ws, app)
	if err != nil {
		errs["target"] = "No app " + app + " in this workspace."
		return
	}
	for _, act := range a.Actions {
		if act.Key != action {
			continue
		}
		if err := catalog.ValidateInput(act.InputSchema, input); err != nil {
			var ie *catalog.InputError
			if errors.As(err, &ie) {
				errs["input"] = ie.Error()
			} else {
				errs["input"] = err.Error()
			}
		}
		return
	}
	errs["target"] = "No action " + action + " in app " + app + "."
}

// pathSchedule reads the path's schedule.
func (c *Console) pathSchedule(q *req) (schedule.Schedule, error) {
	id, err := uuid.Parse(q.r.PathValue("id"))
	if err != nil {
		return schedule.Schedule{}, &pageError{status: http.StatusNotFound, msg: "No such schedule."}
	}
	return c.cfg.Store.GetSchedule(q.r.Context(), q.ws, id)
}

// enableSchedule enables a schedule from its next tick after now.
func (c *Console) enableSchedule(q *req) error {
	s, err := c.pathSchedule(q)
	if err != nil {
		return err
	}
	cr, err := schedule.ParseCron(s.Cron, s.Timezone)
	if err != nil {
		return err
	}
	if err := c.cfg.Store.SetScheduleEnabled(q.r.Context(), q.ws, s.ID, true, cr.Next(c.now())); err != nil {
		return err
	}
	redirect(q.w, q.r, "/w/"+url.PathEscape(q.ws)+"/schedules?done=enabled")
	return nil
}

// disableSchedule stops a schedule firing; it keeps its row.
func (c *Console) disableSchedule(q *req) error {
	s, err := c.pathSchedule(q)
	if err != nil {
		return err
	}
	if err := c.cfg.Store.SetScheduleEnabled(q.r.Context(), q.ws, s.ID, false, s.NextRunAt); err != nil {
		return err
	}
	redirect(q.w, q.r, "/w/"+url.PathEscape(q.ws)+"/schedules?done=disabled")
	return nil
}

// deleteSchedule removes a schedule.
func (c *Console) deleteSchedule(q *req) error {
	s, err := c.pathSchedule(q)
	if err != nil {
		return err
	}
	if err := c.cfg.Store.DeleteSchedule(q.r.Context(), q.ws, s.ID); err != nil {
		return err
	}
	redirect(q.w, q.r, "/w/"+url.PathEscape(q.ws)+"/schedules?done=deleted")
	return nil
}

// scheduleFlash is the message after a schedule change, by the ?done=
// code the redirect carries: fixed texts, so a crafted link cannot put
// words of its own in the console's mouth.
var scheduleFlash = map[string]string{
	"created": "Schedule created.", "enabled": "Schedule enabled.",
	"disabled": "Schedule disabled.", "deleted": "Schedule deleted.",
}
