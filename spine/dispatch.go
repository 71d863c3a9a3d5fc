package spine

import "sync"

// Dispatch at enqueue (docs/QUEUE.md). A worker whose claim found the
// queue short leaves an offer (ClaimParams.Offer); an enqueue of a due job
// that no waiting job of its tag outranks may then take the offer and
// insert the job already running, owned by that worker with a fresh claim
// token and its first ping, in the enqueue's own statement. The worker
// learns of it from a notification, which carries the job as a read would
// return it when it fits: one claim round trip fewer between a request
// and its job's start, and no read. A job too big for a notification the
// worker reads by its lease.
//
//	worker: claim (short) ──▶ worker_offer row (tags, capacity, expiry)
//	enqueue ──▶ job_queue row running, owned ──NOTIFY (lease, job)──▶ Inbox ──▶ run
//	                                          (lease only) ──▶ Inbox ──▶ ReadDispatched ──▶ run
//
// Every promise of a claim holds for a dispatch: one owner (the offer row
// is locked by the enqueue that dispatches), the first ping written with
// the ownership, the claim token fencing every later write. A dispatch
// never makes the worker own more running jobs than its capacity counted
// by the database; a lease the worker still cannot take (a slot freed in
// the database but not yet in the process) it releases. Notifications
// sent while a listener was away are lost: when it is back it marks every
// inbox missed, and each worker adopts the running jobs the database says
// it owns that it never heard of (Store.Owned). A worker that stops
// releases those instead; a dead worker's are reaped.
//
// A job reaches its worker once: the listener hears each notification
// once, and a job adopted after a reconnect whose notification was only
// late (it committed after the new LISTEN) is recorded in the inbox
// (Inbox.Adopt), which drops that notification.

// Dispatch is one job dispatched to a worker: its lease and, when its
// notification could carry it, the job as the worker would have read it
// (nil: the worker reads it by the lease).
type Dispatch struct {
	Lease Lease
	Job   *ClaimedJob
}

// Inbox holds the jobs dispatched to one worker until it takes them.
// Sends never block and never drop: the dispatches queue up, and Ready
// holds at most one pending signal.
type Inbox struct {
	ready chan struct{}

	mu      sync.Mutex
	queue   []Dispatch
	missed  bool           // notifications may have been lost since the last Take
	adopted map[Lease]bool // adopted since the last reconnect: their notifications are dropped
}

// Ready receives a value when dispatches may be waiting in the inbox.
func (in *Inbox) Ready() <-chan struct{} { return in.ready }

// Take empties the inbox and returns what it held, oldest first, and
// whether dispatches to the worker may have been lost since the last
// Take: then the worker must ask the database what it owns.
func (in *Inbox) Take() (dispatched []Dispatch, missed bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	dispatched, missed = in.queue, in.missed
	in.queue, in.missed = nil, false
	return dispatched, missed
}

// Adopt records leases the worker found it owns after a Take that
// reported missed, and is about to start: a notification of one that
// arrived since is removed, and one that arrives later is dropped. The
// record lasts until the next reconnect, after which no notification of
// the connection that could have sent them can arrive.
func (in *Inbox) Adopt(leases []Lease) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.adopted == nil {
		in.adopted = map[Lease]bool{}
	}
	for _, l := range leases {
		in.adopted[l] = true
	}
	kept := in.queue[:0]
	for _, d := range in.queue {
		if in.adopted[d.Lease] {
			delete(in.adopted, d.Lease)
			continue
		}
		kept = append(kept, d)
	}
	in.queue = kept
}

func (in *Inbox) put(d Dispatch) {
	in.mu.Lock()
	if in.adopted[d.Lease] {
		delete(in.adopted, d.Lease)
		in.mu.Unlock()
		return
	}
	in.queue = append(in.queue, d)
	in.mu.Unlock()
	in.signal()
}

func (in *Inbox) miss() {
	in.mu.Lock()
	in.missed = true
	in.adopted = nil
	in.mu.Unlock()
	in.signal()
}

func (in *Inbox) signal() {
	select {
	case in.ready <- struct{}{}:
	default:
	}
}

// Dispatches routes dispatch notifications to the inboxes of the workers
// of this process, by worker name. Stores with dispatch feed it from
// their listener; a dispatch for a worker not here is dropped (it belongs
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

// MissedAll marks every inbox missed: the listener was away, and
// dispatches notified meanwhile reached nobody.
func (d *Dispatches) MissedAll() {
	d.mu.Lock()
	boxes := make([]*Inbox, 0, len(d.boxes))
	for _, in := range d.boxes {
		boxes = append(boxes, in)
	}
	d.mu.Unlock()
	for _, in := range boxes {
		in.miss()
	}
}

// Here reports whether worker has an inbox in this process: a listener
// decodes a notification's job only for a worker here.
func (d *Dispatches) Here(worker string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.boxes[worker] != nil
}

// Deliver puts a dispatch into worker's inbox, if that worker is in this
// process.
func (d *Dispatches) Deliver(worker string, dispatched Dispatch) {
	d.mu.Lock()
	in := d.boxes[worker]
	d.mu.Unlock()
	if in != nil {
		in.put(dispatched)
	}
}
