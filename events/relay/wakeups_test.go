package relay

import (
	"testing"

	"github.com/windforce/windforce/spine"
)

// With nothing to relay the queue's wake-ups are not waited on (a busy
// queue without sinks would otherwise cost a pass every minPassGap);
// with a sink, or events fanned out, they are.
func TestQueueWakeups(t *testing.T) {
	enqueued, finished := make(chan struct{}), make(chan spine.Finished)
	if jobs, done := queueWakeups(false, enqueued, finished); jobs != nil || done != nil {
		t.Errorf("nothing to relay: the relay still waits on the queue's wake-ups")
	}
	if jobs, done := queueWakeups(true, enqueued, finished); jobs != (<-chan struct{})(enqueued) || done != (<-chan spine.Finished)(finished) {
		t.Errorf("something to relay: the relay does not wait on the queue's wake-ups")
	}
}
