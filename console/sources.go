package console

import (
	"errors"
	"net/http"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/source"
)

type sourcesData struct {
	Sources []catalog.Source
	// Flash says what "Sync now" just did; FlashBad marks a failed sync.
	Flash    string
	FlashBad bool
}

// sourcesPage lists the workspace's git sources with their sync state.
func (c *Console) sourcesPage(q *req) error {
	return c.showSources(q, http.StatusOK, sourcesData{})
}

func (c *Console) showSources(q *req, status int, d sourcesData) error {
	srcs, err := c.cfg.Store.ListSources(q.r.Context(), q.ws)
	if err != nil {
		return err
	}
	for i := range srcs { // a row stored before credentials were refused, git's own text
		srcs[i].URL, srcs[i].Error = source.Redact(srcs[i].URL), source.RedactText(srcs[i].Error)
	}
	d.Sources = srcs
	c.render(q.w, status, "sources", "", c.view(q, "Sources", d))
	return nil
}

// syncSource syncs a source's branch head now through the Syncer (admin
// scope) and shows the sources again with what happened. A failed sync
// is shown in full; the catalog is left as it was.
func (c *Console) syncSource(q *req) error {
	id := q.r.PathValue("id")
	res, err := c.cfg.Syncer.Sync(q.r.Context(), q.ws, id)
	var d sourcesData
	var se *source.SyncError
	switch {
	case errors.As(err, &se):
		d.Flash, d.FlashBad = "Sync of "+id+" failed: "+se.Message(), true
		return c.showSources(q, http.StatusUnprocessableEntity, d)
	case err != nil:
		return err
	case res.Unchanged:
		d.Flash = "Source " + id + " is up to date at " + shortSHA(res.Commit) + "."
	default:
		d.Flash = "Synced " + id + " at " + shortSHA(res.Commit) + " (" + plural(len(res.Apps), "app") + ")."
	}
	return c.showSources(q, http.StatusOK, d)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return itoa(n) + " " + what + "s"
}
