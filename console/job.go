package console

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/spine"
)

// event is one line of a job's timeline.
type event struct {
	At     time.Time
	What   string
	Detail string
	Status spine.Status // colours the dot; "" is neutral
}

type jobData struct {
	Job       spine.Job
	Events    []event
	SourceURL string
	CommitURL string
	Duration  time.Duration
	Logs      logsData
	Live      bool
	// CreatedBy and CanceledBy name the job's actors with their token
	// labels beside them (actorNames).
	CreatedBy, CanceledBy string
}

// logsData is the logs block: the chunks after a sequence number and,
// while the job runs, the poller that asks for the next ones.
type logsData struct {
	WS      string
	JobID   uuid.UUID
	Text    string
	LastSeq int64
	Live    bool
}

// pathJob reads the path's job in the path's workspace; a malformed id
// names no job.
func (c *Console) pathJob(q *req) (spine.Job, error) {
	id, err := uuid.Parse(q.r.PathValue("id"))
	if err != nil {
		return spine.Job{}, &pageError{status: http.StatusNotFound, msg: fmt.Sprintf("No job %q in workspace %q.", q.r.PathValue("id"), q.ws)}
	}
	return c.cfg.Store.GetJob(q.r.Context(), q.ws, id)
}

// jobPage shows one job: timeline, pin, input, result or error, logs.
func (c *Console) jobPage(q *req) error {
	j, err := c.pathJob(q)
	if err != nil {
		return err
	}
	// The live refresh of the status block (htmx, target #job-live, sent
	// again as soon as it is answered) is held until the job ends — its
	// completion wakes it — or LiveHold passes, so a finished job shows at
	// once and a live one is re-read every LiveHold. It does not show the
	// logs, which follow on their own poller.
	live := q.r.Header.Get("HX-Target") == "job-live"
	if live && q.r.URL.Query().Get("hold") == "1" {
		if j, err = c.awaitEnd(q, j, c.cfg.LiveHold); err != nil {
			return err
		}
	}
	var logs logsData
	if !live {
		if logs, err = c.logsAfter(q, j, 0); err != nil {
			return err
		}
	}
	audit, err := c.cfg.Store.Audit(q.r.Context(), j.ID)
	if err != nil {
		return err
	}
	actors := []string{j.CreatedBy, j.CanceledBy}
	for _, a := range audit {
		actors = append(actors, a.By)
	}
	who, err := c.actorNames(q.r.Context(), actors...)
	if err != nil {
		return err
	}
	d := jobData{Job: j, Events: timeline(j, audit, who), Duration: jobDuration(j, c.now()), Logs: logs, Live: !j.Status.Terminal(),
		CreatedBy: who(j.CreatedBy), CanceledBy: who(j.CanceledBy)}
	if src, err := c.cfg.Store.GetSource(q.r.Context(), q.ws, j.Pin.GitSourceID); err == nil {
		u := source.Redact(src.URL) // never a credential stored before they were refused
		d.SourceURL, d.CommitURL = u, commitURL(u, j.Pin.CommitSHA)
	}
	return c.page(q, "job", j.Pin.AppKey+"/"+j.Pin.ActionKey+" · "+shortID(j.ID), d)
}

// logsAfter reads j's log chunks after seq. The job is read before its
// logs, so once it reads terminal every chunk is already flushed and the
// poller can stop.
func (c *Console) logsAfter(q *req, j spine.Job, seq int64) (logsData, error) {
	chunks, err := c.cfg.Store.Logs(q.r.Context(), j.ID, seq)
	if err != nil {
		return logsData{}, err
	}
	d := logsData{WS: q.ws, JobID: j.ID, LastSeq: seq, Live: !j.Status.Terminal()}
	var b strings.Builder
	for _, ch := range chunks {
		b.WriteString(ch.Data)
		d.LastSeq = ch.Seq
	}
	d.Text = b.String()
	return d, nil
}

// jobLogs answers the logs block after ?after=SEQ (htmx appends it).
func (c *Console) jobLogs(q *req) error {
	j, err := c.pathJob(q)
	if err != nil {
		return err
	}
	after, _ := strconv.ParseInt(q.r.URL.Query().Get("after"), 10, 64)
	d, err := c.logsAfter(q, j, after)
	if err != nil {
		return err
	}
	c.render(q.w, http.StatusOK, "job", "logchunk", d)
	return nil
}

// timeline orders what is known of a job's life: created, retries,
// restarts, claim, last heartbeat, audit (cancel, reopen), finish. who
// names an actor (created_by, canceled_by, the audit's by) for the page.
func timeline(j spine.Job, audit []spine.AuditEntry, who func(string) string) []event {
	ev := []event{{At: j.CreatedAt, What: "created", Detail: fmt.Sprintf("by %s via %s", who(j.CreatedBy), j.TriggerKind)}}
	if j.ScheduledFor.Sub(j.CreatedAt) > time.Second {
		what := "scheduled"
		if j.Attempt > 1 {
			what = fmt.Sprintf("attempt %d scheduled", j.Attempt)
		}
		ev = append(ev, event{At: j.ScheduledFor, What: what, Detail: "not claimed before this time"})
	}
	if j.LastError != nil && j.Attempt > 1 {
		ev = append(ev, event{At: j.ScheduledFor, What: fmt.Sprintf("attempt %d failed", j.Attempt-1),
			Detail: j.LastError.Message, Status: spine.StatusFailure})
	}
	if j.StartedAt != nil {
		d := fmt.Sprintf("by worker %s, attempt %d of %d", j.Worker, max(j.Attempt, 1), max(j.Pin.Retry.MaxAttempts, 1))
		if j.Attempt > 1 {
			d += fmt.Sprintf(" (%d earlier attempt(s) failed)", j.Attempt-1)
		}
		if j.Restarts > 0 {
			d += fmt.Sprintf(", after %d restart(s) (a worker stopped heartbeating)", j.Restarts)
		}
		ev = append(ev, event{At: *j.StartedAt, What: "claimed", Detail: d, Status: spine.StatusRunning})
	}
	if j.Ping != nil && !j.Status.Terminal() {
		ev = append(ev, event{At: *j.Ping, What: "last heartbeat", Detail: "the worker is alive", Status: spine.StatusRunning})
	}
	for _, a := range audit {
		d := "by " + who(a.By)
		if a.Reason != "" {
			d += ": " + a.Reason
		}
		ev = append(ev, event{At: a.At, What: a.Action, Detail: d})
	}
	if j.CompletedAt != nil {
		d := ""
		if j.Error != nil {
			d = j.Error.Message
		}
		if j.Status == spine.StatusCanceled && j.CanceledBy != "" {
			d = "by " + who(j.CanceledBy) + " " + j.CanceledReason
		}
		ev = append(ev, event{At: *j.CompletedAt, What: "finished " + string(j.Status), Detail: d, Status: j.Status})
	}
	sort.SliceStable(ev, func(a, b int) bool { return ev[a].At.Before(ev[b].At) })
	return ev
}

// jobURL is a job's page.
func jobURL(ws string, id uuid.UUID) string {
	return "/w/" + url.PathEscape(ws) + "/jobs/" + id.String()
}

// cancelJob cancels the job through the spine (terminal at once when
// waiting; its worker stops it when running) and shows it again.
func (c *Console) cancelJob(q *req) error {
	j, err := c.pathJob(q)
	if err != nil {
		return err
	}
	reason := strings.TrimSpace(q.r.PostFormValue("reason"))
	if reason == "" {
		reason = "canceled in the console"
	}
	_, err = c.cfg.Store.Cancel(q.r.Context(), spine.CancelParams{Workspace: q.ws, JobID: j.ID, By: q.u.name(), Reason: reason})
	if err != nil {
		return err
	}
	redirect(q.w, q.r, jobURL(q.ws, j.ID))
	return nil
}

// reopenJob runs a failed (or, with force, canceled) job again under the
// same id (operator scope).
func (c *Console) reopenJob(q *req) error {
	j, err := c.pathJob(q)
	if err != nil {
		return err
	}
	err = c.cfg.Store.Reopen(q.r.Context(), spine.ReopenParams{Workspace: q.ws, JobID: j.ID, By: q.u.name(),
		Reason: strings.TrimSpace(q.r.PostFormValue("reason")), Force: q.r.PostFormValue("force") != ""})
	if err != nil {
		return err
	}
	redirect(q.w, q.r, jobURL(q.ws, j.ID))
	return nil
}

// rerunJob enqueues the job's input again as a new manual run of the same
// action, through the one enqueue path (so it pins the catalog as it is
// now), and shows the new job.
func (c *Console) rerunJob(q *req) error {
	j, err := c.pathJob(q)
	if err != nil {
		return err
	}
	res, err := c.enq.Enqueue(q.r.Context(), catalog.EnqueueRequest{Workspace: q.ws,
		App: j.Pin.AppKey, Action: j.Pin.ActionKey, TriggerKind: spine.TriggerManual, TriggerRef: "rerun:" + j.ID.String(),
		CreatedBy: q.u.name(), Input: j.Input})
	if err != nil {
		return err
	}
	redirect(q.w, q.r, jobURL(q.ws, res.ID))
	return nil
}

// outcomeData is the inline result of a run from the action page.
type outcomeData struct {
	WS   string
	Job  spine.Job
	Poll int // polls so far; past MaxPolls the page links to the job
	// MaxPolls is outcomePolls, for the template.
	MaxPolls int
	Done     bool
	URL      string
}

// outcomePolls requests, each held up to outcomeHold (live.go) and sent
// again at once (hx-trigger in action.html), is how long the action page
// waits inline (about 5 s) before it only links to the job.
const outcomePolls = 5

// jobOutcome answers the outcome block for ?poll=N: the result or error
// as soon as the job's completion wakes it, else, after outcomeHold,
// another request until about 5 s have passed.
func (c *Console) jobOutcome(q *req) error {
	j, err := c.pathJob(q)
	if err != nil {
		return err
	}
	if j, err = c.awaitEnd(q, j, outcomeHold); err != nil {
		return err
	}
	n, _ := strconv.Atoi(q.r.URL.Query().Get("poll"))
	c.render(q.w, http.StatusOK, "action", "outcome", outcomeData{WS: q.ws, Job: j, Poll: n + 1, MaxPolls: outcomePolls,
		Done: j.Status.Terminal(), URL: jobURL(q.ws, j.ID)})
	return nil
}
