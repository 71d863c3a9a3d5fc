package console

import (
	"net/http"
	"strconv"
	"time"

	"github.com/windforce/windforce/spine"
)

type healthData struct {
	Tags   []spine.TagHealth
	Totals spine.TagHealth
	Chart  chart
}

// healthPage shows the workspace's rows of the queue_health view and the
// completions per minute of the last hour.
func (c *Console) healthPage(q *req) error {
	rows, err := c.cfg.Store.Health(q.r.Context())
	if err != nil {
		return err
	}
	d := healthData{}
	for _, h := range rows {
		if h.Workspace != q.ws {
			continue
		}
		d.Tags = append(d.Tags, h)
		t := &d.Totals
		t.Waiting += h.Waiting
		t.Scheduled += h.Scheduled
		t.Running += h.Running
		t.Failed24h += h.Failed24h
		t.ExpiredHeartbeats += h.ExpiredHeartbeats
		t.OldestWaitingAge = max(t.OldestWaitingAge, h.OldestWaitingAge)
	}
	ch, err := c.completions(q, c.now())
	if err != nil {
		return err
	}
	d.Chart = ch
	c.render(q.w, http.StatusOK, "health", "", c.view(q, "Queue health", d))
	return nil
}

// chartWindow and chartScan bound the chart: the last hour, read from at
// most chartScan jobs of the listing (newest first).
const (
	chartWindow = time.Hour
	chartScan   = 5000
)

// completions counts finished jobs per minute and status over the last
// hour. It pages through ListJobs (terminal statuses, newest created
// first) and stops at jobs created more than a day before the window
// (or after chartScan jobs), so a job created long before it finished
// may be missed; the listing is the store's own index, no extra SQL.
func (c *Console) completions(q *req, now time.Time) (chart, error) {
	// 60 one-minute buckets; the last one is the current minute.
	since := now.Truncate(time.Minute).Add(-chartWindow + time.Minute)
	counts := map[spine.Status][]int64{}
	for _, s := range []spine.Status{spine.StatusSuccess, spine.StatusFailure, spine.StatusCanceled} {
		counts[s] = make([]int64, 60)
	}
	p := spine.ListJobsParams{Workspace: q.ws, Limit: spine.MaxListLimit,
		Statuses: []spine.Status{spine.StatusSuccess, spine.StatusFailure, spine.StatusCanceled}}
	oldest := since.Add(-24 * time.Hour)
	for scanned := 0; scanned < chartScan; {
		jobs, err := c.cfg.Store.ListJobs(q.r.Context(), p)
		if err != nil {
			return chart{}, err
		}
		for _, j := range jobs {
			if j.CompletedAt != nil && !j.CompletedAt.Before(since) {
				if i := int(j.CompletedAt.Sub(since) / time.Minute); i >= 0 && i < 60 {
					counts[j.Status][i]++
				}
			}
		}
		scanned += len(jobs)
		if len(jobs) < p.Limit || jobs[len(jobs)-1].CreatedAt.Before(oldest) {
			break
		}
		last := jobs[len(jobs)-1]
		p.After = &spine.JobCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	return buildChart(since, counts), nil
}

func itoa(n int) string { return strconv.Itoa(n) }
