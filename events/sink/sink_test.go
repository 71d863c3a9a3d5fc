package sink

import (
	"errors"
	"testing"
	"time"
)

// TestBackoff: 1 s doubling, at most 5 min apart (DESIGN §9).
func TestBackoff(t *testing.T) {
	t.Parallel()
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}
	for i, w := range want {
		if got := Backoff(i + 1); got != w {
			t.Errorf("Backoff(%d) = %s, want %s", i+1, got, w)
		}
	}
	for _, n := range []int{10, 11, 50, 1 << 20} {
		if got := Backoff(n); got != MaxBackoff {
			t.Errorf("Backoff(%d) = %s, want %s", n, got, MaxBackoff)
		}
	}
}

// TestRetryGivesUpAfterMaxAge: a failure retried until the next attempt
// would fall past 24 h after the delivery was made, then failed.
func TestRetryGivesUpAfterMaxAge(t *testing.T) {
	t.Parallel()
	created := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	if next, failed := Retry(created, created.Add(time.Second), 1); failed || !next.Equal(created.Add(2*time.Second)) {
		t.Fatalf("first retry: %s, failed %v", next, failed)
	}
	if _, failed := Retry(created, created.Add(MaxAge-time.Minute), 30); !failed {
		t.Fatal("a retry 4 min past the window still scheduled")
	}
	if next, failed := Retry(created, created.Add(MaxAge-6*time.Minute), 30); failed || !next.Equal(created.Add(MaxAge-time.Minute)) {
		t.Fatalf("the last retry in the window: %s, failed %v", next, failed)
	}
}

// TestPrepareAndCheck: defaults, the generated secret, and refusals.
func TestPrepareAndCheck(t *testing.T) {
	t.Parallel()
	s := Sink{Workspace: "w", Kind: KindWebhook, URL: "https://h/x"}
	gen, err := Prepare(&s)
	if err != nil || !gen || s.Subject != DefaultSubject || s.Types == nil || len(s.ID) != len("webhook-")+8 {
		t.Fatalf("Prepare = %+v, %v, %v", s, gen, err)
	}
	if key, err := SecretKey(s.Secret); err != nil || len(key) != 32 {
		t.Fatalf("generated secret %q: %v", s.Secret, err)
	}
	other := s
	other.Secret = ""
	if _, err := Prepare(&other); err != nil || other.Secret == s.Secret {
		t.Fatalf("a second generated secret %q equals the first, %v", other.Secret, err)
	}
	for _, bad := range []Sink{
		{ID: "x", Kind: KindNATS, URL: "nats://h:1", Subject: "a b"},
		{ID: "x", Kind: KindNATS, URL: "nats://h:1", Subject: "a.>"},
		{ID: "-x", Kind: KindNATS, URL: "nats://h:1", Subject: "a"},
		{ID: "x", Kind: KindNATS, URL: "nats://", Subject: "a"},
		{ID: "x", Kind: KindWebhook, URL: "https://h/x", Subject: "a", Secret: "whsec_" + "AAAA"},
	} {
		if err := Check(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("Check(%+v) = %v, want ErrInvalid", bad, err)
		}
	}
}
