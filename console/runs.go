package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// runsPageSize is how many jobs a runs page shows.
const runsPageSize = 50

// allStatuses are the job statuses in lifecycle order.
var allStatuses = []spine.Status{spine.StatusQueued, spine.StatusRunning, spine.StatusSuccess, spine.StatusFailure, spine.StatusCanceled}

// allTriggers are the trigger kinds the filter offers.
var allTriggers = []spine.TriggerKind{spine.TriggerAPI, spine.TriggerCLI, spine.TriggerManual, spine.TriggerWebhook,
	spine.TriggerSchedule, spine.TriggerSeed, spine.TriggerChild}

// runFilter is the runs page's GET form.
type runFilter struct {
	Status, App, Action, Tag, Trigger string
	// After is the cursor "UNIXNANO_ID" of the previous page's last job.
	After string
}

// Query is the filter as a query string (without the cursor).
func (f runFilter) Query() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"status": f.Status, "app": f.App, "action": f.Action, "tag": f.Tag, "trigger": f.Trigger} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return v
}

// Any reports whether a filter is set.
func (f runFilter) Any() bool { return len(f.Query()) > 0 }

// statusCount is one status with its count, for the counts bar.
type statusCount struct {
	Status spine.Status
	Count  int64
}

// runRow is one job in the table.
type runRow struct {
	spine.Job
	Duration time.Duration
}

type runsData struct {
	Filter   runFilter
	Counts   []statusCount
	Total    int64
	Jobs     []runRow
	Next     string // query of the next page, "" on the last
	Live     bool   // a shown job is queued or running: refresh
	Statuses []spine.Status
	Triggers []spine.TriggerKind
	Apps     []string
	SelfURL  string
	// Waiting counts the waiting jobs of an app, action or tag filter
	// (up to one batch, WaitingMore past it) for "Requeue N waiting
	// jobs"; RequeueURL is its confirmation.
	Waiting     int
	WaitingMore bool
	RequeueURL  string
}

// parseFilter reads the runs form; an unknown status or trigger is 400.
func parseFilter(r *http.Request) (runFilter, spine.ListJobsParams, error) {
	q := r.URL.Query()
	f := runFilter{Status: q.Get("status"), App: strings.TrimSpace(q.Get("app")), Action: strings.TrimSpace(q.Get("action")),
		Tag: strings.TrimSpace(q.Get("tag")), Trigger: q.Get("trigger"), After: q.Get("after")}
	p := spine.ListJobsParams{App: f.App, Action: f.Action, Tag: f.Tag, Limit: runsPageSize + 1}
	if f.Status != "" {
		s := spine.Status(f.Status)
		if !validStatus(s) {
			return f, p, &pageError{status: http.StatusBadRequest, msg: "Unknown status " + strconv.Quote(f.Status) + "."}
		}
		p.Statuses = []spine.Status{s}
	}
	if f.Trigger != "" {
		p.Trigger = spine.TriggerKind(f.Trigger)
		if !p.Trigger.Valid() {
			return f, p, &pageError{status: http.StatusBadRequest, msg: "Unknown trigger " + strconv.Quote(f.Trigger) + "."}
		}
	}
	if f.After != "" {
		cur, ok := parseCursor(f.After)
		if !ok {
			return f, p, &pageError{status: http.StatusBadRequest, msg: "Bad page cursor; go back to the first page."}
		}
		p.After = &cur
	}
	return f, p, nil
}

func validStatus(s spine.Status) bool {
	for _, k := range allStatuses {
		if k == s {
			return true
		}
	}
	return false
}

// cursor encodes a job's listing position as "UNIXNANO_UUID".
func cursor(j spine.Job) string {
	return strconv.FormatInt(j.CreatedAt.UnixNano(), 10) + "_" + j.ID.String()
}

func parseCursor(s string) (spine.JobCursor, bool) {
	ns, id, ok := strings.Cut(s, "_")
	if !ok {
		return spine.JobCursor{}, false
	}
	n, err := strconv.ParseInt(ns, 10, 64)
	u, err2 := uuid.Parse(id)
	if err != nil || err2 != nil {
		return spine.JobCursor{}, false
	}
	return spine.JobCursor{CreatedAt: time.Unix(0, n).UTC(), ID: u}, true
}

// runsPage lists the workspace's jobs, newest first.
func (c *Console) runsPage(q *req) error {
	f, p, err := parseFilter(q.r)
	if err != nil {
		return err
	}
	p.Workspace = q.ws
	jobs, err := c.cfg.Store.ListJobs(q.r.Context(), p)
	if err != nil {
		return err
	}
	counts, err := c.cfg.Store.CountJobs(q.r.Context(), q.ws)
	if err != nil {
		return err
	}
	d := runsData{Filter: f, Statuses: allStatuses, Triggers: allTriggers, SelfURL: q.r.URL.RequestURI()}
	for _, s := range allStatuses {
		d.Counts = append(d.Counts, statusCount{Status: s, Count: counts[s]})
		d.Total += counts[s]
	}
	if len(jobs) > runsPageSize {
		jobs = jobs[:runsPageSize]
		next := f.Query()
		next.Set("after", cursor(jobs[len(jobs)-1]))
		d.Next = "?" + next.Encode()
	}
	now := c.now()
	for _, j := range jobs {
		d.Jobs = append(d.Jobs, runRow{Job: j, Duration: jobDuration(j, now)})
		d.Live = d.Live || !j.Status.Terminal()
	}
	d.Apps = c.appKeys(q)
	if err := c.offerRequeue(q, f, &d); err != nil {
		return err
	}
	return c.page(q, "runs", "Runs", d)
}

// jobDuration is how long a job ran (so far, while running).
func jobDuration(j spine.Job, now time.Time) time.Duration {
	if j.StartedAt == nil {
		return 0
	}
	end := now
	if j.CompletedAt != nil {
		end = *j.CompletedAt
	}
	return end.Sub(*j.StartedAt)
}

// appKeys lists the workspace's app keys for the filter's suggestions.
func (c *Console) appKeys(q *req) []string {
	apps, err := c.cfg.Store.ListApps(q.r.Context(), q.ws)
	if err != nil {
		c.log.Warn("console: list apps", "err", err)
		return nil
	}
	out := make([]string, 0, len(apps))
	for _, a := range apps {
		out = append(out, a.Key)
	}
	return out
}
