package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// testEnqueue checks invariant 1: one enqueue writes the job and its queue
// row with every pinned field, or refuses the request and writes nothing.
func testEnqueue(t *testing.T, newStore newStoreFunc) {
	t.Run("PinRoundTrips", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		now := b.clock.Now()
		id := uuid.Must(uuid.NewV7())
		pin := fullPin()
		pin.Tag = "gpu"
		pin.Retry = retry3
		p := b.params(withID(id), withTag("gpu"), withRetry(retry3), withPriority(7),
			withInput(`{"name":"world","n":[1,2,3],"nested":{"ok":true}}`))
		p.TriggerKind = spine.TriggerWebhook
		p.TriggerRef = "hook-42"
		p.CreatedBy = "alice"

		res, err := b.store.Enqueue(b.ctx, p)
		if err != nil {
			t.Fatalf("Enqueue: %v", err)
		}
		if res.ID != id || res.Coalesced || res.Generation != 1 {
			t.Fatalf("Enqueue result %+v, want id %v, not coalesced, generation 1", res, id)
		}
		j := b.requireStatus(id, spine.StatusQueued, "just enqueued")
		requirePin(t, "GetJob", j.Pin, pin)
		jsonEqual(t, "GetJob input", j.Input, p.Input)
		if j.Workspace != testWorkspace || j.TriggerKind != spine.TriggerWebhook || j.TriggerRef != "hook-42" ||
			j.CreatedBy != "alice" || j.Priority != 7 {
			t.Fatalf("GetJob: workspace %q trigger %q/%q created_by %q priority %d; want %q webhook/hook-42 alice 7",
				j.Workspace, j.TriggerKind, j.TriggerRef, j.CreatedBy, j.Priority, testWorkspace)
		}
		if j.Attempt != 1 || j.Restarts != 0 || j.Generation != 1 {
			t.Fatalf("GetJob: attempt %d restarts %d generation %d, want 1, 0, 1", j.Attempt, j.Restarts, j.Generation)
		}
		sameTime(t, "created_at", j.CreatedAt, now)
		sameTime(t, "scheduled_for (zero means now)", j.ScheduledFor, now)
		requireNilTime(t, "started_at of a waiting job", j.StartedAt)
		requireNilTime(t, "completed_at of a waiting job", j.CompletedAt)
		requireNilTime(t, "ping of a waiting job", j.Ping)
		if j.Worker != "" || j.Error != nil || j.LastError != nil || j.CanceledBy != "" {
			t.Fatalf("GetJob of a fresh job: worker %q error %v last_error %v canceled_by %q; want none",
				j.Worker, j.Error, j.LastError, j.CanceledBy)
		}
	})

	t.Run("LimitsPinned", func(t *testing.T) {
		// The limits a job pins at enqueue are what its worker gets at claim
		// and what GetJob shows, through Enqueue and EnqueueBatch alike, with
		// unset fields (zero) kept unset rather than becoming 0-byte limits.
		t.Parallel()
		b := setup(t, newStore)
		cases := []spine.Limits{
			{Memory: 512 << 20, Pids: 256, CPU: 1},
			{Pids: 64},
			{CPU: 0.25},
			{Memory: 8 << 40},
			{},
		}
		want := map[uuid.UUID]spine.Limits{}
		var batch []spine.EnqueueParams
		for i, l := range cases {
			p := b.params(withID(uuid.Must(uuid.NewV7())), withPriority(len(cases)*2-i))
			p.Pin.Limits = l
			want[p.ID] = l
			if _, err := b.store.Enqueue(b.ctx, p); err != nil {
				t.Fatalf("Enqueue with limits %+v: %v", l, err)
			}
			p = b.params(withID(uuid.Must(uuid.NewV7())), withPriority(len(cases)-i))
			p.Pin.Limits = l
			want[p.ID] = l
			batch = append(batch, p)
		}
		if _, err := b.store.EnqueueBatch(b.ctx, batch); err != nil {
			t.Fatalf("EnqueueBatch: %v", err)
		}
		for id, l := range want {
			if got := b.get(id).Pin.Limits; got != l {
				t.Errorf("GetJob %s: limits %+v, want %+v", id, got, l)
			}
		}
		claimed := b.claim(spine.ClaimParams{Limit: len(want)})
		if len(claimed) != len(want) {
			t.Fatalf("claimed %d jobs, want %d", len(claimed), len(want))
		}
		for _, c := range claimed {
			if c.Pin.Limits != want[c.ID] {
				t.Errorf("ClaimedJob %s: limits %+v, want %+v", c.ID, c.Pin.Limits, want[c.ID])
			}
		}
		for id, l := range want {
			if got := b.get(id).Pin.Limits; got != l {
				t.Errorf("GetJob %s while running: limits %+v, want %+v", id, got, l)
			}
		}
		// list checks that each listed job is its GetJob view, limits too.
		if ids := b.list(spine.ListJobsParams{}); len(ids) != len(want) {
			t.Fatalf("ListJobs: %d jobs, want %d", len(ids), len(want))
		}
	})

	t.Run("Defaults", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		now := b.clock.Now()
		p := b.params(withTag(""), withRetry(spine.RetryPolicy{}))
		p.Input = nil
		res, err := b.store.Enqueue(b.ctx, p)
		if err != nil {
			t.Fatalf("Enqueue: %v", err)
		}
		if res.ID == uuid.Nil || res.ID.Version() != 7 {
			t.Fatalf("generated id %v: want a UUIDv7", res.ID)
		}
		j := b.requireStatus(res.ID, spine.StatusQueued, "just enqueued")
		if j.Pin.Tag != spine.DefaultTag {
			t.Fatalf("empty tag stored as %q, want %q", j.Pin.Tag, spine.DefaultTag)
		}
		if j.Pin.Retry != spine.DefaultRetry {
			t.Fatalf("zero retry policy stored as %+v, want the default %+v", j.Pin.Retry, spine.DefaultRetry)
		}
		jsonEqual(t, "empty input", j.Input, json.RawMessage("null"))
		sameTime(t, "scheduled_for", j.ScheduledFor, now)
		if got := b.claim(spine.ClaimParams{}); len(got) != 1 || got[0].ID != res.ID {
			t.Fatalf("a job enqueued without a tag is not claimable on %q: got %v", spine.DefaultTag, claimedIDs(got))
		}
	})

	t.Run("MicrosecondPrecision", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		now := b.clock.Now().Add(123456 * time.Nanosecond)
		at := now.Add(time.Hour + 654321*time.Nanosecond)
		id := b.enqueue(withNow(now), withScheduledFor(at))
		j := b.get(id)
		sameTime(t, "created_at with sub-millisecond digits", j.CreatedAt, now.Truncate(time.Microsecond))
		sameTime(t, "scheduled_for with sub-millisecond digits", j.ScheduledFor, at.Truncate(time.Microsecond))
	})

	t.Run("ScheduledForKept", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		at := b.clock.Now().Add(90 * time.Minute)
		id := b.enqueue(withScheduledFor(at))
		sameTime(t, "scheduled_for", b.get(id).ScheduledFor, at)
	})

	t.Run("InvalidWritesNothing", func(t *testing.T) {
		t.Parallel()
		for _, tc := range invalidEnqueues() {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				b := setup(t, newStore)
				p := b.params(withID(uuid.Must(uuid.NewV7())))
				tc.mod(&p)
				_, err := b.store.Enqueue(b.ctx, p)
				requireErrorIs(t, err, spine.ErrInvalid, "Enqueue with "+tc.name)
				b.requireGone(p.ID, "after a refused enqueue")
				b.requireEmptyQueue("a refused enqueue wrote a queue row")
			})
		}
	})

	t.Run("BatchAllOrNothingOnInvalid", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		ps := make([]spine.EnqueueParams, 4)
		for i := range ps {
			ps[i] = b.params(withID(uuid.Must(uuid.NewV7())))
		}
		ps[3].Input = json.RawMessage(`{"broken":`)
		_, err := b.store.EnqueueBatch(b.ctx, ps)
		requireErrorIs(t, err, spine.ErrInvalid, "EnqueueBatch with one invalid input")
		for _, p := range ps {
			b.requireGone(p.ID, "a batch with one bad item must write nothing")
		}
		b.requireEmptyQueue("a refused batch wrote queue rows")
	})

	t.Run("BatchAllOrNothingOnDatabaseError", func(t *testing.T) {
		// Validation alone cannot catch a duplicate id: only the database
		// does, after the earlier items were inserted, so this proves the
		// batch is one transaction.
		t.Parallel()
		b := setup(t, newStore)
		dup := b.enqueue()
		ps := []spine.EnqueueParams{
			b.params(withID(uuid.Must(uuid.NewV7()))),
			b.params(withID(uuid.Must(uuid.NewV7()))),
			b.params(withID(dup)),
		}
		if _, err := b.store.EnqueueBatch(b.ctx, ps); err == nil {
			t.Fatal("EnqueueBatch reusing an existing job id: no error")
		}
		b.requireGone(ps[0].ID, "first item of a batch that failed on its last")
		b.requireGone(ps[1].ID, "second item of a batch that failed on its last")
		b.requireStatus(dup, spine.StatusQueued, "the existing job is untouched")
		if jobs := b.claim(spine.ClaimParams{Limit: 10}); len(jobs) != 1 {
			t.Fatalf("after a failed batch %d jobs are claimable, want only the 1 enqueued before", len(jobs))
		}
	})

	t.Run("BatchResultsInOrder", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		ps := []spine.EnqueueParams{
			b.params(withID(uuid.Must(uuid.NewV7())), withTag("a"), withInput(`{"i":0}`)),
			b.params(withID(uuid.Must(uuid.NewV7())), withTag("b"), withInput(`{"i":1}`)),
			b.params(withID(uuid.Must(uuid.NewV7())), withTag("a"), withInput(`{"i":2}`)),
		}
		res, err := b.store.EnqueueBatch(b.ctx, ps)
		if err != nil {
			t.Fatalf("EnqueueBatch: %v", err)
		}
		if len(res) != len(ps) {
			t.Fatalf("EnqueueBatch of %d returned %d results", len(ps), len(res))
		}
		for i, p := range ps {
			if res[i].ID != p.ID || res[i].Coalesced || res[i].Generation != 1 {
				t.Fatalf("result %d = %+v, want id %v generation 1", i, res[i], p.ID)
			}
			j := b.requireStatus(p.ID, spine.StatusQueued, "enqueued in a batch")
			jsonEqual(t, "batch item input", j.Input, p.Input)
			if j.Pin.Tag != p.Pin.Tag {
				t.Fatalf("batch item %d tag %q, want %q", i, j.Pin.Tag, p.Pin.Tag)
			}
		}
	})

	t.Run("OtherWorkspaceNotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue()
		_, err := b.store.GetJob(b.ctx, otherWS, id)
		requireErrorIs(t, err, spine.ErrNotFound, "GetJob from another workspace")
		_, err = b.store.GetJob(b.ctx, testWorkspace, uuid.Must(uuid.NewV7()))
		requireErrorIs(t, err, spine.ErrNotFound, "GetJob of an unknown id")
	})
}

// invalidEnqueue is one malformed request.
type invalidEnqueue struct {
	name string
	mod  func(*spine.EnqueueParams)
}

// invalidEnqueues lists requests every store must refuse with ErrInvalid.
func invalidEnqueues() []invalidEnqueue {
	return []invalidEnqueue{
		{"InvalidJSON", func(p *spine.EnqueueParams) { p.Input = json.RawMessage(`{"name":`) }},
		{"EscapedNUL", func(p *spine.EnqueueParams) { p.Input = json.RawMessage(`{"name":"a\u0000b"}`) }},
		{"RawNUL", func(p *spine.EnqueueParams) { p.Input = json.RawMessage("\"a\x00b\"") }},
		{"InvalidUTF8", func(p *spine.EnqueueParams) { p.Input = json.RawMessage("\"\xff\xfe\"") }},
		{"EmptyWorkspace", func(p *spine.EnqueueParams) { p.Workspace = "" }},
		{"UnknownTriggerKind", func(p *spine.EnqueueParams) { p.TriggerKind = "carrier-pigeon" }},
		{"EmptyTriggerKind", func(p *spine.EnqueueParams) { p.TriggerKind = "" }},
		{"EmptyApp", func(p *spine.EnqueueParams) { p.Pin.AppKey = "" }},
		{"EmptyAction", func(p *spine.EnqueueParams) { p.Pin.ActionKey = "" }},
	}
}
