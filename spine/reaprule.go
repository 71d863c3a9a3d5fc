package spine

import (
	"fmt"
	"time"
)

// Zombie is a running job whose worker stopped heartbeating, as the reaper
// read it under its lock (invariant 4).
type Zombie struct {
	// Worker is the worker that held the claim.
	Worker string
	// Restarts counts the reaper's earlier requeues of the job.
	Restarts int
	// Canceled is set when the job carries a cancel mark.
	Canceled bool
	// Ping is the job's last heartbeat; nil when it never had one.
	Ping *time.Time
}

// ReapAction is what the reaper does with a zombie.
type ReapAction int

const (
	// ReapRequeue sends the job back to waiting with restarts+1; the
	// attempt is not charged.
	ReapRequeue ReapAction = iota + 1
	// ReapFail completes the job as failure: it reached the restart limit.
	ReapFail
	// ReapCancel completes a cancel-marked job canceled: a cancel is
	// terminal, so the reaper never revives it (invariant 6).
	ReapCancel
)

// Kinds of the job errors the reaper stores.
const (
	// ZombieErrorKind is the kind of last_error on a job the reaper requeued.
	ZombieErrorKind = "zombie"
	// RestartLimitErrorKind is the kind of error on a job the reaper failed.
	RestartLimitErrorKind = "restart_limit"
)

// ReapRule decides what the reaper does with z under restartLimit (a
// negative limit counts as 0: no restarts) and returns the job error to
// store: last_error for ReapRequeue, error for ReapFail, none (the zero
// JobError) for ReapCancel. Stores compute the text here, in Go, and pass
// it to their SQL, so both databases store the same words.
func ReapRule(z Zombie, restartLimit int) (ReapAction, JobError) {
	limit := max(restartLimit, 0)
	switch {
	case z.Canceled:
		return ReapCancel, JobError{}
	case z.Restarts+1 <= limit:
		return ReapRequeue, JobError{
			Message: fmt.Sprintf("worker %s stopped heartbeating; requeued (restart %d of %d)",
				z.Worker, z.Restarts+1, limit),
			Kind: ZombieErrorKind,
		}
	}
	return ReapFail, JobError{
		Message: fmt.Sprintf("restart limit %d reached: worker %s stopped heartbeating (last ping %s)",
			limit, z.Worker, formatPing(z.Ping)),
		Kind: RestartLimitErrorKind,
	}
}

// formatPing writes a last ping for the restart-limit reason: UTC RFC 3339
// with as many fraction digits as it has (Postgres keeps microseconds), or
// never.
func formatPing(ping *time.Time) string {
	if ping == nil {
		return "never"
	}
	return ping.UTC().Format(time.RFC3339Nano)
}
