package driver

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/events/sink"
)

// RelayExecutor is the relay's work on the database: the fan-out of
// outbox events into deliveries (behind one cursor), the leased claim of
// due deliveries, their settling, and the sweep of settled rows. The core
// (store.Store's FanOut, ClaimDeliveries, SettleDelivery) decides what
// each settle writes (sink.Retry); these operations only keep their guard.
type RelayExecutor interface {
	// RelayCursor reads the fan-out cursor: the last outbox seq whose
	// deliveries exist.
	RelayCursor(ctx context.Context) (int64, error)
	// RelayLockCursor reads the cursor for moving it in this transaction.
	// On Postgres it locks the row SKIP LOCKED: ok is false while another
	// server's fan-out holds it (that one does the work). On SQLite the
	// one writer is the lock and ok is true.
	// With wait it waits for the lock instead (a sink's delete, which
	// must not run beside a fan-out that could still make deliveries of
	// the sink).
	RelayLockCursor(ctx context.Context, wait bool) (seq int64, ok bool, err error)
	// RelaySetCursor moves the cursor to seq.
	RelaySetCursor(ctx context.Context, seq int64) error
	// DeliveryInsert makes the deliveries ds (Workspace, SinkID, EventSeq,
	// EventID, EventType, Subject) pending, due at now (zero: the
	// database's clock), created at now; a delivery that exists already is
	// left as it is.
	DeliveryInsert(ctx context.Context, ds []sink.Delivery, now time.Time) error
	// DeliveryClaim leases up to p.Limit due deliveries of one sink for one
	// attempt (attempts+1) and returns them with their events, lowest seq
	// first. Of one subject only the pending delivery with the lowest seq
	// is claimable (leased or not, due or not), so a subject's events reach
	// a sink in order. A delivery leased by someone else is claimable once
	// its lease has run out. On Postgres the pick is FOR UPDATE SKIP
	// LOCKED, so servers claiming at once never take one row twice.
	DeliveryClaim(ctx context.Context, p DeliveryClaimParams) ([]sink.Claimed, error)
	// DeliverySettle ends the attempt under p.Lease: delivered, failed
	// (both stamped at p.Now), or pending again due at p.NextAttemptAt.
	// A non-empty p.LastError replaces the stored one. ok is false, and
	// nothing is written, when the lease is no longer the delivery's (it
	// ran out and another attempt took it) or the delivery is gone.
	DeliverySettle(ctx context.Context, p DeliverySettleParams) (ok bool, err error)
	// DeliveryRetryNow makes the pending deliveries of one sink that wait
	// for a later attempt due at now (zero: the database's clock): the
	// sink is back (its NATS connection returned), so nothing waits out
	// a backoff it built up while down.
	DeliveryRetryNow(ctx context.Context, workspace, sinkID string, now time.Time) error
	// DeliverySweep deletes up to limit settled (delivered or failed)
	// deliveries settled before before and says how many.
	DeliverySweep(ctx context.Context, before time.Time, limit int) (int, error)
	// OutboxSweep deletes up to limit outbox events from before before
	// that the fan-out has passed and no delivery names any more, and
	// says how many.
	OutboxSweep(ctx context.Context, before time.Time, limit int) (int, error)
}

// DeliveryClaimParams is one sink's claim.
type DeliveryClaimParams struct {
	Workspace, SinkID string
	// Now is the relay's clock; zero means the database's.
	Now time.Time
	// Lease marks the claimed rows; LeaseFor is how long from Now they
	// stay this claim's.
	Lease    uuid.UUID
	LeaseFor time.Duration
	Limit    int
}

// DeliverySettleParams is the end of one attempt.
type DeliverySettleParams struct {
	Workspace, SinkID string
	EventSeq          int64
	Lease             uuid.UUID
	Status            sink.Status
	// NextAttemptAt is the next attempt's time (Status pending).
	NextAttemptAt time.Time
	LastError     string
	// Now stamps delivered_at or failed_at; zero means the database's.
	Now time.Time
}
