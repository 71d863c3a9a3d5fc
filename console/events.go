package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/spine"
)

// EventStore is what the Events page reads and writes: the sinks (with
// their CRUD's own checks), each sink's deliveries and their counts, and
// the workspace's recent events. The store core implements it.
type EventStore interface {
	sink.Store
	// RecentEvents is the workspace's newest events, newest first, at
	// most limit.
	RecentEvents(ctx context.Context, workspace string, limit int) ([]events.Event, error)
}

// recentEvents is how many events the Events page lists.
const recentEvents = 50

// deliveriesPage is how many deliveries a sink's page lists at once.
const deliveriesPage = 50

// counts is how many of a sink's deliveries are in each status.
type counts struct {
	Pending, Delivered, Failed int
}

// countsOf reads a sink's counts per status.
func (c *Console) countsOf(ctx context.Context, ws, id string) (counts, error) {
	m, err := c.cfg.Store.DeliveryCounts(ctx, ws, id)
	if err != nil {
		return counts{}, err
	}
	return counts{Pending: m[sink.StatusPending], Delivered: m[sink.StatusDelivered], Failed: m[sink.StatusFailed]}, nil
}

// sinkRow is a sink on the Events page, with its delivery counts.
type sinkRow struct {
	sink.Sink
	Counts counts
}

// eventRow is a recent event on the Events page.
type eventRow struct {
	events.Event
	// Job is set when the subject is a job of the workspace (job events).
	Job bool
	// Summary is app/action and status, or the source's commit, and the
	// error when there is one.
	Summary string
}

// sinkForm is the add-sink form's values and its error.
type sinkForm struct {
	ID, Kind, URL, Subject string
	Types                  map[string]bool
	Error                  string
}

type eventsData struct {
	Sinks  []sinkRow
	Events []eventRow
	Types  []string
	Form   sinkForm
	// Created is the sink just created; its Secret is shown this once.
	Created *sink.Sink
	Flash   string
}

// eventsPage lists the sinks with their counts, the add form (admin) and
// the recent events.
func (c *Console) eventsPage(q *req) error {
	return c.showEvents(q, http.StatusOK, eventsData{Form: sinkForm{Kind: string(sink.KindWebhook)},
		Flash: sinkFlash[q.r.URL.Query().Get("done")]})
}

func (c *Console) showEvents(q *req, status int, d eventsData) error {
	ctx := q.r.Context()
	sinks, err := c.cfg.Store.ListSinks(ctx, q.ws)
	if err != nil {
		return err
	}
	for _, s := range sinks {
		n, err := c.countsOf(ctx, q.ws, s.ID)
		if err != nil {
			return err
		}
		// As the API shows it: a NATS password or a receiver's token in
		// the URL is not every reader's to see.
		s.URL = source.Redact(s.URL)
		d.Sinks = append(d.Sinks, sinkRow{Sink: s, Counts: n})
	}
	evs, err := c.cfg.Store.RecentEvents(ctx, q.ws, recentEvents)
	if err != nil {
		return err
	}
	for _, ev := range evs {
		d.Events = append(d.Events, viewEvent(ev))
	}
	d.Types = sink.EventTypes
	c.render(q.w, status, "events", "", c.view(q, "Events", d))
	return nil
}

// viewEvent picks what a row shows of an event's data.
func viewEvent(ev events.Event) eventRow {
	row := eventRow{Event: ev, Job: strings.HasPrefix(string(ev.Type), "job.")}
	g, ok := events.GlanceOf(ev.Data)
	if !ok {
		return row
	}
	switch {
	case g.App != "":
		row.Summary = g.App + "/" + g.Action + " " + g.Status
	case g.Commit != "":
		row.Summary = "at " + shortSHA(g.Commit)
	}
	switch {
	case g.Error == "":
	case row.Summary == "":
		row.Summary = g.Error // a source that never synced
	default:
		row.Summary += ": " + g.Error
	}
	return row
}

// createSink adds a sink through the same checks the API's create makes;
// a refused form is shown again with the reason and stores nothing. A
// webhook sink's generated secret is shown once, on the page this POST
// answers (not after a redirect, so it is nowhere else).
func (c *Console) createSink(q *req) error {
	r := q.r
	f := sinkForm{ID: strings.TrimSpace(r.PostFormValue("id")), Kind: r.PostFormValue("kind"),
		URL: strings.TrimSpace(r.PostFormValue("url")), Subject: strings.TrimSpace(r.PostFormValue("subject")),
		Types: map[string]bool{}}
	var types []string
	for _, t := range r.PostForm["types"] {
		f.Types[t] = true
		types = append(types, t)
	}
	s, err := c.cfg.Store.CreateSink(r.Context(), sink.Sink{Workspace: q.ws, ID: f.ID, Kind: sink.Kind(f.Kind),
		URL: f.URL, Subject: f.Subject, Types: types, CreatedBy: q.u.name()})
	switch {
	case errors.Is(err, sink.ErrInvalid):
		f.Error = strings.TrimPrefix(err.Error(), sink.ErrInvalid.Error()+": ")
	case errors.Is(err, spine.ErrConflict):
		f.Error = "This workspace already has a sink " + f.ID + "."
	case err != nil:
		return err
	}
	if f.Error != "" {
		return c.showEvents(q, http.StatusUnprocessableEntity, eventsData{Form: f})
	}
	d := eventsData{Form: sinkForm{Kind: string(sink.KindWebhook)}, Created: &s, Flash: "Sink " + s.ID + " added."}
	return c.showEvents(q, http.StatusOK, d)
}

// deleteSink removes a sink and its deliveries.
func (c *Console) deleteSink(q *req) error {
	if err := c.cfg.Store.DeleteSink(q.r.Context(), q.ws, q.r.PathValue("id")); err != nil {
		return err
	}
	redirect(q.w, q.r, "/w/"+url.PathEscape(q.ws)+"/events?done=deleted")
	return nil
}

// sinkFlash is the message after a sink change, by ?done= (fixed texts,
// as scheduleFlash).
var sinkFlash = map[string]string{"deleted": "Sink deleted."}

type sinkData struct {
	Sink       sink.Sink
	Counts     counts
	Deliveries []sink.Delivery
	// Status is the ?status= filter, "" for all.
	Status string
	// Next is the cursor of the next page, 0 on the last.
	Next int64
}

// sinkPage shows one sink and a page of its deliveries, newest first,
// filtered by ?status=, with their attempts and last errors.
func (c *Console) sinkPage(q *req) error {
	ctx := q.r.Context()
	s, err := c.cfg.Store.GetSink(ctx, q.ws, q.r.PathValue("id"))
	if err != nil {
		return err
	}
	v := q.r.URL.Query()
	f := sink.DeliveryFilter{Limit: deliveriesPage + 1}
	if st := sink.Status(v.Get("status")); st.Valid() {
		f.Status = st
	}
	if n, err := strconv.ParseInt(v.Get("before"), 10, 64); err == nil && n > 0 {
		f.Before = n
	}
	list, err := c.cfg.Store.ListDeliveries(ctx, q.ws, s.ID, f)
	if err != nil {
		return err
	}
	n, err := c.countsOf(ctx, q.ws, s.ID)
	if err != nil {
		return err
	}
	s.URL = source.Redact(s.URL)
	d := sinkData{Sink: s, Counts: n, Status: string(f.Status)}
	if len(list) > deliveriesPage {
		list = list[:deliveriesPage]
		d.Next = list[deliveriesPage-1].EventSeq
	}
	d.Deliveries = list
	return c.page(q, "sink", "Sink "+s.ID, d)
}
