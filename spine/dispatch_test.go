package spine

import (
	"testing"

	"github.com/google/uuid"
)

// take returns what the inbox holds now.
func take(t *testing.T, in *Inbox) []Dispatch {
	t.Helper()
	select {
	case <-in.Ready():
	default:
		return nil
	}
	ds, _ := in.Take()
	return ds
}

func newLease() Lease { return Lease{JobID: uuid.New(), ClaimToken: uuid.New()} }

// A job handed over by its enqueue reaches the worker once, whichever
// comes first: its notification (another connection) or the end of its
// enqueue's statement.
func TestDispatchesHandOverOnce(t *testing.T) {
	var d Dispatches
	in, stop := d.Subscribe("w")
	defer stop()

	// The notification first: held back, then dropped by the hand-over.
	l := newLease()
	if !d.Expect(l.JobID) {
		t.Fatal("Expect with a worker here: false")
	}
	d.Deliver("w", l)
	if got := take(t, in); len(got) != 0 {
		t.Fatalf("a notification before the hand-over came through: %+v", got)
	}
	d.Settle(l.JobID, "w", &ClaimedJob{ID: l.JobID, ClaimToken: l.ClaimToken})
	if got := take(t, in); len(got) != 1 || got[0].Job == nil || got[0].Lease != l {
		t.Fatalf("after the hand-over: %+v, want the job once", got)
	}
	d.Deliver("w", l) // a duplicate of nothing: delivered as a plain lease (the worker's read fences it)
	if got := take(t, in); len(got) != 1 || got[0].Job != nil {
		t.Fatalf("an unexpected notification: %+v, want its lease", got)
	}

	// The hand-over first: its notification, when it comes, is dropped.
	l = newLease()
	d.Expect(l.JobID)
	d.Settle(l.JobID, "w", &ClaimedJob{ID: l.JobID, ClaimToken: l.ClaimToken})
	d.Deliver("w", l)
	if got := take(t, in); len(got) != 1 || got[0].Job == nil {
		t.Fatalf("hand-over then notification: %+v, want the job once", got)
	}
	if len(d.expected) != 0 {
		t.Fatalf("%d expectations left", len(d.expected))
	}
}

// An enqueue that dispatched nothing, or whose outcome is unknown, lets a
// notification held back through as a lease; one for a worker elsewhere
// is not handed over.
func TestDispatchesSettleWithoutJob(t *testing.T) {
	var d Dispatches
	in, stop := d.Subscribe("w")
	defer stop()
	l := newLease()
	d.Expect(l.JobID)
	d.Deliver("w", l)
	d.Settle(l.JobID, "", nil)
	if got := take(t, in); len(got) != 1 || got[0].Job != nil || got[0].Lease != l {
		t.Fatalf("after a failed enqueue: %+v, want the held lease", got)
	}

	l = newLease()
	d.Expect(l.JobID)
	d.Settle(l.JobID, "elsewhere", &ClaimedJob{ID: l.JobID, ClaimToken: l.ClaimToken})
	if got := take(t, in); len(got) != 0 || len(d.expected) != 0 {
		t.Fatalf("a job for another process: %+v, %d expectations", got, len(d.expected))
	}
}

// A process with no worker records nothing; a reconnect forgets the
// notifications awaited for jobs already handed over (they may be lost),
// and keeps the enqueues still running.
func TestDispatchesExpectations(t *testing.T) {
	var d Dispatches
	if d.Expect(uuid.New()) || len(d.expected) != 0 {
		t.Fatal("Expect without a worker recorded one")
	}
	in, stop := d.Subscribe("w")
	defer stop()
	done, running := newLease(), newLease()
	d.Expect(done.JobID)
	d.Settle(done.JobID, "w", &ClaimedJob{ID: done.JobID, ClaimToken: done.ClaimToken})
	d.Expect(running.JobID)
	d.MissedAll()
	if _, ok := d.expected[done.JobID]; ok {
		t.Fatal("a handed-over job's notification is still awaited after a reconnect")
	}
	if _, ok := d.expected[running.JobID]; !ok {
		t.Fatal("a running enqueue's expectation was dropped by a reconnect")
	}
	if _, missed := in.Take(); !missed {
		t.Fatal("the inbox was not marked missed")
	}
}
