package spine

import "time"

// FailRule decides what a failed attempt of a running job does, from what
// a store read under the job's lock: go back to waiting for attempt+1 at
// the returned time while the pinned policy has attempts left (NextRetry),
// else finish as failure. A cancel mark wins over a retry: a marked job
// always finishes (canceled, which the store's completion writes for a
// marked job whatever status it is asked for).
func FailRule(p RetryPolicy, attempt int, canceled bool, now time.Time) (at time.Time, retry bool) {
	if canceled {
		return time.Time{}, false
	}
	return NextRetry(p, attempt, now)
}
