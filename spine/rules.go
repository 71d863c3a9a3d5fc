package spine

import "fmt"

// The operator rules of DESIGN §2 (invariants 6 and 7) and the requeue of
// §4, decided once here from a job's status so that every store refuses
// the same jobs with the same ErrConflict text. A store reads the status
// under its own lock, asks the rule, and only then writes. The empty status
// stands for a job the store could not find in the workspace.

// CancelAction is what a cancel does to a live job (invariant 6).
type CancelAction int

const (
	// CancelAtOnce completes a waiting job canceled in the same transaction.
	CancelAtOnce CancelAction = iota + 1
	// CancelMark marks a running job; its worker sees the mark on its next
	// heartbeat and completes it canceled, or the reaper does.
	CancelMark
)

// CancelRule says what canceling a job with status does: CancelAtOnce for
// a queued job, CancelMark for a running one, ErrConflict naming the status
// for a finished one (cancel is terminal, never undone by another cancel),
// ErrNotFound for the empty status.
func CancelRule(status Status) (CancelAction, error) {
	switch status {
	case StatusQueued:
		return CancelAtOnce, nil
	case StatusRunning:
		return CancelMark, nil
	case "":
		return 0, ErrNotFound
	}
	return 0, fmt.Errorf("%w: cannot cancel a job that already finished with status %s", ErrConflict, status)
}

// ReopenRule says whether an operator may reopen a job with status
// (invariant 7): a failed job may, a canceled one only with force. Any
// other status is an ErrConflict saying why; the empty status is
// ErrNotFound.
func ReopenRule(status Status, force bool) error {
	switch status {
	case StatusFailure:
		return nil
	case StatusCanceled:
		if force {
			return nil
		}
		return fmt.Errorf("%w: the job was canceled; reopening it needs force", ErrConflict)
	case StatusQueued, StatusRunning:
		return fmt.Errorf("%w: cannot reopen a job that is %s", ErrConflict, status)
	case "":
		return ErrNotFound
	}
	return fmt.Errorf("%w: cannot reopen a job that finished with status %s", ErrConflict, status)
}

// RequeueRule says whether a job with status may be requeued onto the
// catalog as it is now (DESIGN §4): only a waiting job may, because a
// running one is owned by its worker and a finished one is reopened, not
// requeued. ErrConflict otherwise; the empty status is ErrNotFound.
func RequeueRule(status Status) error {
	switch status {
	case StatusQueued:
		return nil
	case StatusRunning:
		return fmt.Errorf("%w: cannot requeue a running job; only a waiting job can be requeued", ErrConflict)
	case "":
		return ErrNotFound
	}
	return fmt.Errorf("%w: cannot requeue a job that already finished with status %s", ErrConflict, status)
}
