package storetest

import (
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
)

// testHealth checks the queue_health view. The view reads the database's
// clock, so this test places its fake times relative to the real time:
// "expired" means a ping minutes old, "scheduled" an hour ahead.
func testHealth(t *testing.T, newStore newStoreFunc) {
	t.Run("EmptyStore", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		if h := b.healthByTag(); len(h) != 0 {
			t.Fatalf("Health of an empty store: %+v, want no rows", h)
		}
	})

	t.Run("FiguresPerTag", func(t *testing.T) {
		t.Parallel()
		testHealthFigures(t, newStore)
	})
}

// testHealthFigures builds a queue with one job in each interesting state
// on tag h1 and one waiting job on h2, then reads the view.
func testHealthFigures(t *testing.T, newStore newStoreFunc) {
	b := setup(t, newStore)
	if err := b.store.SetZombieTimeout(b.ctx, zombieTimeout); err != nil {
		t.Fatalf("SetZombieTimeout: %v", err)
	}
	wall := b.clock.Now() // the fake clock starts at the real time
	ago := func(d time.Duration) time.Time { return wall.Add(-d) }
	h1 := spine.ClaimParams{Tags: []string{"h1"}}
	claimAt := func(at time.Time) spine.ClaimedJob {
		t.Helper()
		h1.Now = at
		jobs := b.claim(h1)
		if len(jobs) != 1 {
			t.Fatalf("claim on h1 at %v: %d jobs, want 1", at, len(jobs))
		}
		return jobs[0]
	}

	// Failed 25 h ago (outside the 24 h window) and 1 h ago (inside).
	b.enqueue(withTag("h1"), withNow(ago(26*time.Hour)))
	b.fail(lease(claimAt(ago(26*time.Hour))), "old failure", ago(25*time.Hour))
	b.enqueue(withTag("h1"), withNow(ago(2*time.Hour)))
	b.fail(lease(claimAt(ago(2*time.Hour))), "recent failure", ago(time.Hour))
	// Reaped once, then running with a fresh ping: restarts 1.
	b.enqueue(withTag("h1"), withNow(ago(20*time.Minute)))
	claimAt(ago(20 * time.Minute))
	if res := b.reap(ago(15 * time.Minute)); len(res.Requeued) != 1 {
		t.Fatalf("reap: %+v, want one requeued", res)
	}
	claimAt(wall)
	// Running with a ping 10 minutes old: an expired heartbeat.
	b.enqueue(withTag("h1"), withNow(ago(10*time.Minute)))
	claimAt(ago(10 * time.Minute))
	// Failed once, waiting for attempt 2.
	b.enqueue(withTag("h1"), withRetry(retry3), withNow(ago(5*time.Minute)))
	if out := b.fail(lease(claimAt(ago(5*time.Minute))), "first try", ago(5*time.Minute)); !out.Retried {
		t.Fatalf("fail with attempts left: %+v, want a retry", out)
	}
	// Two waiting for 30 minutes, one scheduled an hour ahead.
	b.enqueue(withTag("h1"), withNow(ago(30*time.Minute)))
	b.enqueue(withTag("h1"), withNow(ago(30*time.Minute)))
	b.enqueue(withTag("h1"), withScheduledFor(wall.Add(time.Hour)))
	b.enqueue(withTag("h2"))
	b.enqueue(withTag("h2"), withWorkspace(otherWS))
	b.enqueue(withTag("h2"), withWorkspace(otherWS))

	health := b.healthByTag()
	if len(health) != 3 {
		t.Fatalf("Health: %d rows %+v, want %s/h1, %s/h2 and %s/h2", len(health), health, testWorkspace, testWorkspace, otherWS)
	}
	got := health[testWorkspace+"/h1"]
	want := spine.TagHealth{Workspace: testWorkspace, Tag: "h1", Waiting: 3, Scheduled: 1, Running: 2,
		Failed24h: 1, ExpiredHeartbeats: 1, MaxAttempt: 2, MaxRestarts: 1}
	requireHealth(t, got, want, 30*time.Minute)
	got = health[testWorkspace+"/h2"]
	want = spine.TagHealth{Workspace: testWorkspace, Tag: "h2", Waiting: 1, MaxAttempt: 1}
	requireHealth(t, got, want, 0)
	got = health[otherWS+"/h2"]
	want = spine.TagHealth{Workspace: otherWS, Tag: "h2", Waiting: 2, MaxAttempt: 1}
	requireHealth(t, got, want, 0)

	// The view reads the zombie timeout from the setting.
	if err := b.store.SetZombieTimeout(b.ctx, time.Hour); err != nil {
		t.Fatalf("SetZombieTimeout: %v", err)
	}
	if h := b.healthByTag()[testWorkspace+"/h1"]; h.ExpiredHeartbeats != 0 {
		t.Fatalf("with a 1 h zombie timeout a 10-minute-old ping counts as expired (%d)", h.ExpiredHeartbeats)
	}
}

// requireHealth compares one health row; the oldest waiting age is checked
// to be at least minAge (and plausible), as the database clock moves on.
func requireHealth(t *testing.T, got, want spine.TagHealth, minAge time.Duration) {
	t.Helper()
	age := got.OldestWaitingAge
	got.OldestWaitingAge, want.OldestWaitingAge = 0, 0
	if got != want {
		t.Fatalf("queue_health %s/%s:\n got %+v\nwant %+v", want.Workspace, want.Tag, got, want)
	}
	// A second of slack for the test and database clocks disagreeing.
	if age < minAge-time.Second || age > minAge+5*time.Minute {
		t.Fatalf("queue_health %s/%s: oldest waiting age %v, want about %v", want.Workspace, want.Tag, age, minAge)
	}
	if minAge > 0 && age <= 0 {
		t.Fatalf("queue_health %s/%s: oldest waiting age %v, want > 0", want.Workspace, want.Tag, age)
	}
}
