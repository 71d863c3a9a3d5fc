package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// requeueData is the bulk requeue's confirmation page: the waiting jobs
// the runs filter picks (at most catalog.MaxRequeueBatch), each named in
// the form, so the POST requeues exactly what was confirmed.
type requeueData struct {
	Filter runFilter
	Jobs   []spine.Job
	// More is set when more jobs wait than one batch holds.
	More  bool
	Max   int
	Runs  string // the filtered runs page
	Again string // this confirmation again, for the rest
}

// requeuedRow is one moved job of the result page.
type requeuedRow struct{ From, To uuid.UUID }

// skippedRow is one job the bulk requeue left, with why.
type skippedRow struct {
	ID     uuid.UUID
	Reason string
}

// requeueResult is the bulk requeue's result page.
type requeueResult struct {
	Filter   runFilter
	Requeued []requeuedRow
	Skipped  []skippedRow
	Runs     string
	Again    string
}

// requeueFilter reads the app, action and tag of a runs filter (query or
// form); one of them is required, so no click requeues a whole
// workspace.
func requeueFilter(r *http.Request) (runFilter, error) {
	f := runFilter{App: strings.TrimSpace(r.FormValue("app")), Action: strings.TrimSpace(r.FormValue("action")),
		Tag: strings.TrimSpace(r.FormValue("tag"))}
	if f.App == "" && f.Action == "" && f.Tag == "" {
		return f, &pageError{status: http.StatusBadRequest,
			msg: "Filter the runs by app, action or tag first: a bulk requeue moves the waiting jobs of a filter."}
	}
	return f, nil
}

// links are the filtered runs page and this confirmation again.
func (f runFilter) requeueLinks(ws string) (runs, again string) {
	base := "/w/" + url.PathEscape(ws) + "/runs"
	q := f.Query().Encode()
	return base + "?" + q, base + "/requeue?" + q
}

// waitingJobs lists up to catalog.MaxRequeueBatch waiting jobs of the
// filter, newest first, and whether more wait.
func (c *Console) waitingJobs(q *req, f runFilter) ([]spine.Job, bool, error) {
	jobs, err := c.cfg.Store.ListJobs(q.r.Context(), spine.ListJobsParams{Workspace: q.ws,
		Statuses: []spine.Status{spine.StatusQueued}, App: f.App, Action: f.Action, Tag: f.Tag, Limit: catalog.MaxRequeueBatch + 1})
	if err != nil {
		return nil, false, err
	}
	if len(jobs) > catalog.MaxRequeueBatch {
		return jobs[:catalog.MaxRequeueBatch], true, nil
	}
	return jobs, false, nil
}

// offerRequeue fills d's "Requeue N waiting jobs" when the runs filter
// names an app, action or tag, may show waiting jobs (no status or
// queued), and the user may requeue.
func (c *Console) offerRequeue(q *req, f runFilter, d *runsData) error {
	if f.App == "" && f.Action == "" && f.Tag == "" || f.Status != "" && f.Status != string(spine.StatusQueued) ||
		!q.can(auth.Need(auth.ActionRequeue)) {
		return nil
	}
	jobs, more, err := c.waitingJobs(q, f)
	if err != nil {
		return err
	}
	d.Waiting, d.WaitingMore = len(jobs), more
	_, d.RequeueURL = f.requeueLinks(q.ws)
	return nil
}

// requeueConfirm is the confirmation of "Requeue N waiting jobs" on a
// filtered runs page: it lists the jobs and asks before anything moves.
func (c *Console) requeueConfirm(q *req) error {
	f, err := requeueFilter(q.r)
	if err != nil {
		return err
	}
	jobs, more, err := c.waitingJobs(q, f)
	if err != nil {
		return err
	}
	d := requeueData{Filter: f, Jobs: jobs, More: more, Max: catalog.MaxRequeueBatch}
	d.Runs, d.Again = f.requeueLinks(q.ws)
	return c.page(q, "requeue", "Requeue waiting jobs", d)
}

// requeueJobs requeues the jobs the confirmation named (as the API's
// bulk requeue: each its own single requeue, the filter checked again)
// and shows what moved and what was skipped and why.
func (c *Console) requeueJobs(q *req) error {
	f, err := requeueFilter(q.r)
	if err != nil {
		return err
	}
	var ids []uuid.UUID
	for _, v := range q.r.PostForm["id"] {
		id, err := uuid.Parse(v)
		if err != nil {
			return &pageError{status: http.StatusBadRequest, msg: "The form names a job id that is not one: " + strconv.Quote(v) + "."}
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return &pageError{status: http.StatusBadRequest, msg: "The form names no job to requeue; open the confirmation again."}
	}
	b, err := c.enq.RequeueWaiting(q.r.Context(), c.cfg.Store, catalog.RequeueFilter{Workspace: q.ws,
		App: f.App, Action: f.Action, Tag: f.Tag, IDs: ids, Actor: q.u.name()})
	if err != nil {
		return err
	}
	d := requeueResult{Filter: f}
	d.Runs, d.Again = f.requeueLinks(q.ws)
	for _, m := range b.Requeued {
		d.Requeued = append(d.Requeued, requeuedRow{From: m.From, To: m.To})
	}
	for _, s := range b.Skipped {
		_, msg := classify(s.Err)
		d.Skipped = append(d.Skipped, skippedRow{ID: s.ID, Reason: msg})
	}
	return c.page(q, "requeued", "Requeued", d)
}
