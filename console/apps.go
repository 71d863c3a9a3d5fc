package console

import (
	"net/http"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// sourceApps is one source with the apps the catalog holds from it.
type sourceApps struct {
	Source catalog.Source
	Apps   []catalog.App
}

type appsData struct {
	Sources []sourceApps
	// Orphans are apps whose source is gone (should not happen; shown
	// rather than hidden).
	Orphans []catalog.App
}

// appsPage lists the catalog per source and commit, with each action's
// timeout, tag and a link to its run form.
func (c *Console) appsPage(q *req) error {
	srcs, err := c.cfg.Store.ListSources(q.r.Context(), q.ws)
	if err != nil {
		return err
	}
	apps, err := c.cfg.Store.ListApps(q.r.Context(), q.ws)
	if err != nil {
		return err
	}
	d := appsData{}
	idx := map[string]int{}
	for _, s := range srcs {
		idx[s.ID] = len(d.Sources)
		d.Sources = append(d.Sources, sourceApps{Source: s})
	}
	for _, a := range apps {
		i, ok := idx[a.SourceID]
		if !ok {
			d.Orphans = append(d.Orphans, a)
			continue
		}
		d.Sources[i].Apps = append(d.Sources[i].Apps, a)
	}
	c.render(q.w, http.StatusOK, "apps", "", c.view(q, "Apps", d))
	return nil
}

// actionRow is an action with the values a job of it would pin.
type actionRow struct {
	catalog.Action
	Pin spine.Pin
}

// pins returns the effective timeout and tag of each action of a.
func pins(a catalog.App) []actionRow {
	out := make([]actionRow, 0, len(a.Actions))
	for _, act := range a.Actions {
		out = append(out, actionRow{Action: act, Pin: catalog.Pin(a, act)})
	}
	return out
}
