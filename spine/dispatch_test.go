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

// Dispatches reach the inbox of their worker, in order, and only a
// worker of this process.
func TestDispatchesRouteByWorker(t *testing.T) {
	var d Dispatches
	in, stop := d.Subscribe("w")
	a, b := newLease(), newLease()
	if !d.Here("w") || d.Here("elsewhere") {
		t.Fatal("Here: wrong workers")
	}
	d.Deliver("w", Dispatch{Lease: a})
	d.Deliver("elsewhere", Dispatch{Lease: newLease()})
	d.Deliver("w", Dispatch{Lease: b, Job: &ClaimedJob{ID: b.JobID}})
	if got := take(t, in); len(got) != 2 || got[0].Lease != a || got[1].Lease != b || got[1].Job == nil {
		t.Fatalf("inbox: %+v, want a then b with its job", got)
	}
	stop()
	if d.Here("w") {
		t.Fatal("a stopped inbox is still here")
	}
}

// A job the worker adopted after a reconnect reaches it once: its
// notification, queued before the adoption or arriving after it, is
// dropped; after the next reconnect nothing is remembered.
func TestInboxDropsNotificationsOfAdoptedJobs(t *testing.T) {
	var d Dispatches
	in, stop := d.Subscribe("w")
	defer stop()
	d.MissedAll()
	if _, missed := in.Take(); !missed {
		t.Fatal("the inbox was not marked missed")
	}
	queued, late, other := newLease(), newLease(), newLease()
	d.Deliver("w", Dispatch{Lease: queued}) // arrived while the worker read what it owns
	in.Adopt([]Lease{queued, late})
	d.Deliver("w", Dispatch{Lease: late, Job: &ClaimedJob{ID: late.JobID}})
	d.Deliver("w", Dispatch{Lease: other})
	if got := take(t, in); len(got) != 1 || got[0].Lease != other {
		t.Fatalf("inbox after the adoption: %+v, want only the other job", got)
	}
	if len(in.adopted) != 0 {
		t.Fatalf("%d adopted leases still remembered after their notifications", len(in.adopted))
	}
	forgotten := newLease()
	in.Adopt([]Lease{forgotten})
	d.MissedAll()
	if len(in.adopted) != 0 {
		t.Fatal("a reconnect kept the adopted leases")
	}
}
