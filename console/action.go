package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/console/schemaform"
	"github.com/windforce/windforce/spine"
)

// actionData is the action page: the action, its run form and, after a
// run, the outcome block that polls for the result.
type actionData struct {
	App    catalog.App
	Action catalog.Action
	Pin    spine.Pin
	// Form is the generated form; empty when only raw JSON is offered.
	Form template.HTML
	// RawOnly: the schema is missing or beyond the form generator.
	RawOnly   bool
	RawReason string
	Raw       string
	// Errors not tied to a generated field (raw mode, whole input).
	TopErrors []string
	Outcome   *outcomeData
	Recent    []spine.Job
	// RecentLive: a recent run is queued or running, so the list refreshes.
	RecentLive bool
}

// pathAction reads the path's app and action from the catalog.
func (c *Console) pathAction(q *req) (catalog.App, catalog.Action, error) {
	app, err := c.cfg.Store.GetApp(q.r.Context(), q.ws, q.r.PathValue("app"))
	if err != nil {
		return catalog.App{}, catalog.Action{}, err
	}
	for _, act := range app.Actions {
		if act.Key == q.r.PathValue("action") {
			return app, act, nil
		}
	}
	return catalog.App{}, catalog.Action{}, catalog.NotFound(q.ws, app.Key, q.r.PathValue("action"))
}

// actionPage shows an action with its run form generated from its input
// schema (defaults filled in).
func (c *Console) actionPage(q *req) error {
	app, act, err := c.pathAction(q)
	if err != nil {
		return err
	}
	d := actionData{App: app, Action: act, Pin: catalog.Pin(app, act)}
	if err := c.buildForm(&d, nil, nil); err != nil {
		return err
	}
	return c.showAction(q, http.StatusOK, d)
}

// buildForm renders the run form prefilled with values and errs; a schema
// the generator cannot express falls back to the raw JSON editor.
func (c *Console) buildForm(d *actionData, values json.RawMessage, errs map[string]string) error {
	if !hasJSON(d.Action.InputSchema) {
		d.RawOnly, d.RawReason = true, "This action has no input schema: any JSON is accepted."
	} else {
		form, err := schemaform.Render(d.Action.InputSchema, values, errs)
		var ue *schemaform.UnsupportedError
		switch {
		case errors.As(err, &ue):
			d.RawOnly, d.RawReason = true, "The form cannot show this input schema ("+ue.Reason+"); edit the input as JSON."
		case err != nil:
			return err
		default:
			d.Form = form
		}
	}
	if d.RawOnly {
		d.Raw = "{}"
		if hasJSON(values) {
			d.Raw = prettyJSON(values)
		}
		for ptr, msg := range errs {
			if ptr == "" {
				d.TopErrors = append(d.TopErrors, msg)
			} else {
				d.TopErrors = append(d.TopErrors, ptr+": "+msg)
			}
		}
	}
	return nil
}

// showAction renders the action page with the action's recent runs.
func (c *Console) showAction(q *req, status int, d actionData) error {
	recent, err := c.cfg.Store.ListJobs(q.r.Context(), spine.ListJobsParams{Workspace: q.ws,
		App: d.App.Key, Action: d.Action.Key, Limit: 10})
	if err != nil {
		return err
	}
	d.Recent = recent
	for _, j := range recent {
		d.RecentLive = d.RecentLive || !j.Status.Terminal()
	}
	if q.r.Header.Get("HX-Request") != "" {
		status = http.StatusOK // htmx swaps only 2xx answers
	}
	c.render(q.w, status, "action", "", c.view(q, d.App.Key+"/"+d.Action.Key, d))
	return nil
}

// runAction reads the run form (the fields, or the raw JSON in raw
// mode), enqueues it through the one enqueue path with trigger manual,
// and shows the outcome inline (htmx) or the new job's page. A value the
// form cannot convert, or an input the schema refuses (422 pointers), is
// shown next to its field and enqueues nothing.
func (c *Console) runAction(q *req) error {
	app, act, err := c.pathAction(q)
	if err != nil {
		return err
	}
	d := actionData{App: app, Action: act, Pin: catalog.Pin(app, act)}
	input, errs := c.readInput(q, act)
	if errs == nil && int64(len(input)) > c.cfg.MaxInputBytes {
		errs = map[string]string{"": fmt.Sprintf("The input is %d bytes, over the limit of %d bytes (WINDFORCE_MAX_INPUT_BYTES).",
			len(input), c.cfg.MaxInputBytes)}
	}
	if errs == nil {
		res, err := c.enq.Enqueue(q.r.Context(), catalog.EnqueueRequest{Workspace: q.ws, App: app.Key,
			Action: act.Key, TriggerKind: spine.TriggerManual, CreatedBy: q.u.name(), Input: input})
		var ie *catalog.InputError
		switch {
		case errors.As(err, &ie):
			errs = map[string]string{}
			for _, f := range ie.Fields {
				if _, dup := errs[f.Pointer]; !dup {
					errs[f.Pointer] = f.Message
				}
			}
		case err != nil:
			return err
		case q.r.Header.Get("HX-Request") == "":
			redirect(q.w, q.r, jobURL(q.ws, res.ID))
			return nil
		default:
			d.Outcome = &outcomeData{WS: q.ws, Job: spine.Job{ID: res.ID, Status: spine.StatusQueued},
				MaxPolls: outcomePolls, URL: jobURL(q.ws, res.ID)}
		}
	}
	if err := c.buildForm(&d, input, errs); err != nil {
		return err
	}
	status := http.StatusOK
	if errs != nil {
		status = http.StatusUnprocessableEntity
	}
	return c.showAction(q, status, d)
}

// readInput is the posted input: the raw JSON in raw mode (or when the
// form offers only raw JSON), else the fields converted by schemaform.
// Errors map JSON pointers to messages.
func (c *Console) readInput(q *req, act catalog.Action) (json.RawMessage, map[string]string) {
	if err := q.r.ParseForm(); err != nil {
		return nil, map[string]string{"": "The form could not be read: " + err.Error()}
	}
	raw := q.r.PostForm.Get(schemaform.RawModeField) == "1" || !hasJSON(act.InputSchema)
	if !raw {
		input, err := schemaform.Parse(act.InputSchema, q.r.PostForm)
		var ue *schemaform.UnsupportedError
		if !errors.As(err, &ue) {
			if err != nil {
				if errs := schemaform.Errors(err); errs != nil {
					return input, errs
				}
				return input, map[string]string{"": err.Error()}
			}
			return input, nil
		}
	}
	text := strings.TrimSpace(q.r.PostForm.Get(schemaform.RawField))
	if text == "" {
		text = "{}"
	}
	if !json.Valid([]byte(text)) {
		return nil, map[string]string{"": "The raw input is not valid JSON."}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(text)); err != nil {
		return nil, map[string]string{"": "The raw input is not valid JSON: " + err.Error()}
	}
	if err := spine.CheckText("The input", buf.Bytes()); err != nil {
		return nil, map[string]string{"": strings.TrimPrefix(err.Error(), spine.ErrInvalid.Error()+": ") + "."}
	}
	return buf.Bytes(), nil
}
