package console

import (
	"time"

	"github.com/windforce/windforce/spine"
)

// outcomeHold is how long one request of the action page's outcome block
// is held open for the job to end: the block answers at once when the
// job's completion wakes it (Store's SubscribeCompletion), and otherwise
// after outcomeHold with the status, and asks again.
const outcomeHold = time.Second

// awaitEnd holds a request for a live job j until the job ends or hold
// passes (or the client goes) and returns the job as last read. It
// subscribes to the completion before it reads the job again, so an end
// committed meanwhile is not missed.
func (c *Console) awaitEnd(q *req, j spine.Job, hold time.Duration) (spine.Job, error) {
	if j.Status.Terminal() {
		return j, nil
	}
	done, stop := c.cfg.Store.SubscribeCompletion(j.ID)
	defer stop()
	timer := time.NewTimer(hold)
	defer timer.Stop()
	for {
		cur, err := c.cfg.Store.GetJob(q.r.Context(), q.ws, j.ID)
		if err != nil || cur.Status.Terminal() {
			return cur, err
		}
		select {
		case <-done:
		case <-timer.C:
			return cur, nil
		case <-q.r.Context().Done():
			return cur, nil
		}
	}
}
