package spine

import "sync"

// Dispatch at enqueue (docs/QUEUE.md). A worker whose claim found the
// queue short leaves an offer (ClaimParams.Offer); an enqueue of a due job
// that no waiting job of its tag outranks may then take the offer and
// insert the job already running, owned by that worker with a fresh claim
// token and its first ping, in the enqueue's own statement. The worker
// learns of it from a notification and reads the job by its lease: one
// claim round trip fewer between a request and its job's start.
//
//	worker: claim (short) ──▶ worker_offer row (tags, capacity, expiry)
//	enqueue ──▶ job_queue row running, owned ──NOTIFY──▶ Inbox ──▶ ReadDispatched ──▶ run
//
// Every promise of a claim holds for a dispatch: one owner (the offer row
// is locked by the enqueue that dispatches), the first ping written with
// the ownership, the claim token fencing every later write. A dispatch
// never makes the worker own more running jobs than its capacity counted
// by the database; a lease the worker still cannot take (a slot freed in
// the database but not yet in the process) it releases, and a dispatch
// whose notification is lost is released at the worker's stop or reaped
// like a dead worker's job.

// Inbox holds the leases dispatched to one worker until it takes them.
// Sends never block and never drop: the leases queue up, and Ready holds
// at most one pending signal.
type Inbox struct {
	ready chan struct{}

	mu     sync.Mutex
	leases []Lease
}

// Ready receives a value when leases may be waiting in the inbox.
func (in *Inbox) Ready() <-chan struct{} { return in.ready }

// Take empties the inbox and returns what it held, oldest first.
func (in *Inbox) Take() []Lease {
	in.mu.Lock()
	defer in.mu.Unlock()
	l := in.leases
	in.leases = nil
	return l
}

func (in *Inbox) put(l Lease) {
	in.mu.Lock()
	in.leases = append(in.leases, l)
	in.mu.Unlock()
	select {
	case in.ready <- struct{}{}:
	default:
	}
}

// Dispatches routes dispatch notifications to the inboxes of the workers
// of this process, by worker name. Stores with dispatch feed it from
// their listener; a lease for a worker not here is dropped (it belongs
// to another process, which hears the same notification).
type Dispatches struct {
	mu    sync.Mutex
	boxes map[string]*Inbox
}

// Subscribe gives worker its inbox until the returned function ends it.
// One inbox per worker name: a second Subscribe of the same name replaces
// the first.
func (d *Dispatches) Subscribe(worker string) (*Inbox, func()) {
	in := &Inbox{ready: make(chan struct{}, 1)}
	d.mu.Lock()
	if d.boxes == nil {
		d.boxes = map[string]*Inbox{}
	}
	d.boxes[worker] = in
	d.mu.Unlock()
	var once sync.Once
	return in, func() {
		once.Do(func() {
			d.mu.Lock()
			if d.boxes[worker] == in {
				delete(d.boxes, worker)
			}
			d.mu.Unlock()
		})
	}
}

// Deliver puts l into worker's inbox, if that worker is in this process.
func (d *Dispatches) Deliver(worker string, l Lease) {
	d.mu.Lock()
	in := d.boxes[worker]
	d.mu.Unlock()
	if in != nil {
		in.put(l)
	}
}
