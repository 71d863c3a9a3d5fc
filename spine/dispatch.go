package spine

import (
	"sync"

	"github.com/google/uuid"
)

// Dispatch at enqueue (docs/QUEUE.md). A worker whose claim found the
// queue short leaves an offer (ClaimParams.Offer); an enqueue of a due job
// that no waiting job of its tag outranks may then take the offer and
// insert the job already running, owned by that worker with a fresh claim
// token and its first ping, in the enqueue's own statement. The worker
// learns of it from a notification and reads the job by its lease: one
// claim round trip fewer between a request and its job's start. When the
// enqueue ran in the worker's own process the job itself goes to the
// worker from there, and the read is skipped too (Dispatches.Expect).
//
//	worker: claim (short) ──▶ worker_offer row (tags, capacity, expiry)
//	enqueue ──▶ job_queue row running, owned ──NOTIFY──▶ Inbox ──▶ ReadDispatched ──▶ run
//	   └── same process: the job ───────────────────────▶ Inbox ───────────────────▶ run
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

// Dispatch is one job dispatched to a worker: its lease and, when the
// enqueue that dispatched it ran in this process, the job as the worker
// would have read it (nil: the worker reads it by the lease).
type Dispatch struct {
	Lease Lease
	Job   *ClaimedJob
}

// Inbox holds the jobs dispatched to one worker until it takes them.
// Sends never block and never drop: the dispatches queue up, and Ready
// holds at most one pending signal.
type Inbox struct {
	ready chan struct{}

	mu     sync.Mutex
	queue  []Dispatch
	missed bool // notifications may have been lost since the last Take
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

func (in *Inbox) put(d Dispatch) {
	in.mu.Lock()
	in.queue = append(in.queue, d)
	in.mu.Unlock()
	in.signal()
}

func (in *Inbox) miss() {
	in.mu.Lock()
	in.missed = true
	in.mu.Unlock()
	in.signal()
}

func (in *Inbox) signal() {
	select {
	case in.ready <- struct{}{}:
	default:
	}
}

// Dispatches routes dispatches to the inboxes of the workers of this
// process, by worker name. Stores with dispatch feed it from their
// listener (Deliver) and from their own enqueues (Expect, Settle); a
// dispatch for a worker not here is dropped (it belongs to another
// process, which hears the same notification).
//
// A job handed over by its enqueue runs without a read that would fence
// it, so it must reach its worker once and before its notification, which
// may arrive first (another connection): Expect, before the enqueue's
// statement, makes Deliver hold back that job's notification until Settle,
// and Settle then drops the one of a job it handed over, or delivers it.
type Dispatches struct {
	mu       sync.Mutex
	boxes    map[string]*Inbox
	expected map[uuid.UUID]*expectation
}

// expectation is a job whose enqueue may hand it over in this process.
type expectation struct {
	settled bool      // handed over: drop its notification when it comes
	heard   *Dispatch // its notification, held back until Settle
	worker  string    // whom heard is for
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
// dispatches notified meanwhile reached nobody. The notifications of
// jobs already handed over may be among them: they are no longer awaited
// (one that comes after all is fenced by the worker's read).
func (d *Dispatches) MissedAll() {
	d.mu.Lock()
	boxes := make([]*Inbox, 0, len(d.boxes))
	for _, in := range d.boxes {
		boxes = append(boxes, in)
	}
	for id, e := range d.expected {
		if e.settled {
			delete(d.expected, id)
		}
	}
	d.mu.Unlock()
	for _, in := range boxes {
		in.miss()
	}
}

// Deliver puts the lease of a dispatch notification into worker's inbox,
// if that worker is in this process, unless its job's enqueue is
// expected to hand the job over here (Expect).
func (d *Dispatches) Deliver(worker string, l Lease) {
	d.mu.Lock()
	in := d.boxes[worker]
	if e := d.expected[l.JobID]; e != nil && in != nil {
		if e.settled {
			delete(d.expected, l.JobID)
			in = nil
		} else {
			e.heard, e.worker = &Dispatch{Lease: l}, worker
			in = nil
		}
	}
	d.mu.Unlock()
	if in != nil {
		in.put(Dispatch{Lease: l})
	}
}

// Expect announces an enqueue of job id that may dispatch it, before its
// statement runs. It reports false, and nothing is recorded, when no
// worker of this process has an inbox: there is nobody to hand it to.
// Settle must follow a true.
func (d *Dispatches) Expect(id uuid.UUID) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.boxes) == 0 {
		return false
	}
	if d.expected == nil {
		d.expected = map[uuid.UUID]*expectation{}
	}
	d.expected[id] = &expectation{}
	return true
}

// Settle ends what Expect began. job is what the enqueue dispatched to
// worker, or nil when it dispatched nothing or failed: then a
// notification held back is delivered as it came.
func (d *Dispatches) Settle(id uuid.UUID, worker string, job *ClaimedJob) {
	d.mu.Lock()
	e := d.expected[id]
	var in *Inbox
	var put Dispatch
	switch {
	case e == nil: // MissedAll cannot drop an unsettled one; nothing to do
	case job != nil && d.boxes[worker] != nil:
		in, put = d.boxes[worker], Dispatch{Lease: Lease{JobID: job.ID, ClaimToken: job.ClaimToken}, Job: job}
		if e.heard != nil {
			delete(d.expected, id)
		} else {
			e.settled = true
		}
	default:
		delete(d.expected, id)
		if e.heard != nil {
			in, put = d.boxes[e.worker], *e.heard
		}
	}
	d.mu.Unlock()
	if in != nil {
		in.put(put)
	}
}
