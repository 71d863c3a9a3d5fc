package sink

import "time"

// The retry rule of a failed delivery (DESIGN §9).
const (
	// FirstBackoff is the wait after the first failed attempt; each
	// further failure doubles it, up to MaxBackoff.
	FirstBackoff = time.Second
	MaxBackoff   = 5 * time.Minute
	// MaxAge is how long a delivery is retried, from its creation; an
	// attempt that fails later marks it failed for good.
	MaxAge = 24 * time.Hour
)

// Backoff is the wait after the attempts-th failed attempt (1-based):
// 1 s, 2 s, 4 s … at most MaxBackoff.
func Backoff(attempts int) time.Duration {
	d := FirstBackoff
	for i := 1; i < attempts; i++ {
		d *= 2
		if d >= MaxBackoff {
			return MaxBackoff
		}
	}
	return d
}

// Retry is what becomes of a delivery made at created whose attempts-th
// attempt failed at now: its next attempt's time, or failed when that
// would fall past MaxAge.
func Retry(created, now time.Time, attempts int) (next time.Time, failed bool) {
	next = now.Add(Backoff(attempts))
	if next.Sub(created) > MaxAge {
		return time.Time{}, true
	}
	return next, false
}
