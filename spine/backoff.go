package spine

import (
	"math"
	"math/rand/v2"
	"time"
)

// JitterFraction is how far a retry delay may move from its exponential
// value, either way, so jobs that failed together do not retry together.
const JitterFraction = 0.1

// maxBackoff caps a retry delay; beyond it the exponential is meaningless.
const maxBackoff = 7 * 24 * time.Hour

// RetryDelay is the wait before attempt+1 after attempt failed:
// backoff × factor^(attempt-1), ±JitterFraction. jitter is a number in
// [0,1) (rand.Float64 in production, fixed in tests).
func RetryDelay(p RetryPolicy, attempt int, jitter float64) time.Duration {
	p = p.normalized()
	if attempt < 1 {
		attempt = 1
	}
	base := float64(p.Backoff) * math.Pow(p.Factor, float64(attempt-1))
	d := base * (1 + JitterFraction*(2*jitter-1))
	if d > float64(maxBackoff) || math.IsInf(d, 0) || math.IsNaN(d) {
		return maxBackoff
	}
	return time.Duration(d)
}

// RetryDelayRange is the closed range RetryDelay can return for attempt,
// for callers (and tests) that check a schedule.
func RetryDelayRange(p RetryPolicy, attempt int) (lo, hi time.Duration) {
	return RetryDelay(p, attempt, 0), RetryDelay(p, attempt, 1)
}

// NextRetry decides what a failure of attempt does: retry at the returned
// time, or not at all when the policy's attempts are used up.
func NextRetry(p RetryPolicy, attempt int, now time.Time) (at time.Time, retry bool) {
	p = p.normalized()
	if attempt >= p.MaxAttempts {
		return time.Time{}, false
	}
	return now.Add(RetryDelay(p, attempt, rand.Float64())), true
}

// normalized fills zero fields with DefaultRetry's values.
func (p RetryPolicy) normalized() RetryPolicy {
	if p.MaxAttempts < 1 {
		p.MaxAttempts = DefaultRetry.MaxAttempts
	}
	if p.Backoff <= 0 {
		p.Backoff = DefaultRetry.Backoff
	}
	if p.Factor < 1 {
		p.Factor = DefaultRetry.Factor
	}
	return p
}
