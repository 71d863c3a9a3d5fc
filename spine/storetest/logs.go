package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// testLogs checks that a job's output is stored in order, fenced on the
// claim token like every other write of its worker.
func testLogs(t *testing.T, newStore newStoreFunc) {
	t.Run("OrderedAndTail", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		b.enqueueN(2)
		jobs := b.claim(spine.ClaimParams{Limit: 2})
		c, other := jobs[0], jobs[1]
		var times []time.Time
		for i := range 5 {
			at := b.clock.Advance(time.Second)
			times = append(times, at)
			b.appendLog(lease(c), fmt.Sprintf("line %d\n", i+1), at)
		}
		b.appendLog(lease(other), "other job\n", b.clock.Now())

		all := b.logs(c.ID, 0)
		if len(all) != 5 {
			t.Fatalf("Logs(after 0): %d chunks, want 5", len(all))
		}
		for i, ch := range all {
			if ch.JobID != c.ID || ch.Seq != int64(i+1) || ch.Data != fmt.Sprintf("line %d\n", i+1) {
				t.Fatalf("chunk %d: %+v, want seq %d data %q", i, ch, i+1, fmt.Sprintf("line %d\n", i+1))
			}
			sameTime(t, "chunk time", ch.CreatedAt, times[i])
		}
		tail := b.logs(c.ID, 3)
		if len(tail) != 2 || tail[0].Seq != 4 || tail[1].Seq != 5 {
			t.Fatalf("Logs(after 3): %+v, want seq 4 and 5", tail)
		}
		if rest := b.logs(c.ID, 5); len(rest) != 0 {
			t.Fatalf("Logs(after 5): %+v, want none", rest)
		}
		if o := b.logs(other.ID, 0); len(o) != 1 || o[0].Seq != 1 {
			t.Fatalf("another job's logs: %+v, want its own seq 1", o)
		}
		if none := b.logs(uuid.Must(uuid.NewV7()), 0); len(none) != 0 {
			t.Fatalf("logs of an unknown job: %+v", none)
		}

		b.complete(lease(c), b.clock.Advance(time.Second))
		if got := b.logs(c.ID, 0); len(got) != 5 {
			t.Fatalf("a finished job has %d log chunks, want its 5", len(got))
		}
	})

	t.Run("KeepsDataExactly", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		b.enqueue()
		c := b.claimOne(b.clock.Now())
		data := "tabs\tand ünïcødé ✓, quotes ' \" and a backslash \\ \r\n"
		b.appendLog(lease(c), data, b.clock.Now())
		if got := b.logs(c.ID, 0); len(got) != 1 || got[0].Data != data {
			t.Fatalf("stored log chunk %+v, want data %q", got, data)
		}
	})

	t.Run("StaleTokenRefused", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		b.enqueue()
		old := b.claimOne(b.clock.Now())
		b.appendLog(lease(old), "before the reap\n", b.clock.Now())
		now := b.clock.Advance(zombieTimeout + time.Second)
		b.reap(now)
		err := b.store.AppendLog(b.ctx, spine.AppendLogParams{Lease: lease(old), Data: "from a zombie\n", Now: now})
		requireErrorIs(t, err, spine.ErrNotOwner, "AppendLog of a requeued job with the old token")
		newer := b.claimOne(now)
		err = b.store.AppendLog(b.ctx, spine.AppendLogParams{Lease: lease(old), Data: "from a zombie\n", Now: now})
		requireErrorIs(t, err, spine.ErrNotOwner, "AppendLog with a stale token while another worker owns the job")
		b.appendLog(lease(newer), "second run\n", now)
		b.complete(lease(newer), now)
		err = b.store.AppendLog(b.ctx, spine.AppendLogParams{Lease: lease(newer), Data: "after the end\n", Now: now})
		requireErrorIs(t, err, spine.ErrNotOwner, "AppendLog after Complete")

		got := b.logs(old.ID, 0)
		if len(got) != 2 || got[0].Data != "before the reap\n" || got[1].Data != "second run\n" || got[1].Seq != 2 {
			t.Fatalf("logs: %+v, want only the owners' two chunks, seq 1 and 2", got)
		}
	})
}

// appendLog appends a chunk to an owned job's logs.
func (b *bundle) appendLog(l spine.Lease, data string, now time.Time) {
	b.t.Helper()
	if err := b.store.AppendLog(b.ctx, spine.AppendLogParams{Lease: l, Data: data, Now: now}); err != nil {
		b.t.Fatalf("AppendLog(%v): %v", l.JobID, err)
	}
}

// logs reads a job's chunks after afterSeq.
func (b *bundle) logs(id uuid.UUID, afterSeq int64) []spine.LogChunk {
	b.t.Helper()
	got, err := b.store.Logs(b.ctx, id, afterSeq)
	if err != nil {
		b.t.Fatalf("Logs(%v, %d): %v", id, afterSeq, err)
	}
	return got
}
