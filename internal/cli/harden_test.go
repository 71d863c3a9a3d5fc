package cli

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"syscall"
	"testing"
)

// TestCheckSecret: a bootstrap secret under 32 bytes is refused with a
// message that says how long it must be; unset and long ones pass.
func TestCheckSecret(t *testing.T) {
	for _, v := range []string{"a", "x", strings.Repeat("k", 31)} {
		err := checkSecret("WINDFORCE_SECRET", v)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "at least 32 bytes") {
			t.Errorf("checkSecret(%q) = %v, want a usage error naming 32 bytes", v, err)
		}
	}
	for _, v := range []string{"", strings.Repeat("k", 32)} {
		if err := checkSecret("WINDFORCE_SECRET", v); err != nil {
			t.Errorf("checkSecret(%d bytes) = %v", len(v), err)
		}
	}
}

// TestRaiseFileLimit: a process started with a soft open-file limit under
// its hard limit runs with the hard limit.
func TestRaiseFileLimit(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Max <= 256 {
		t.Skipf("hard open-file limit %d leaves nothing to raise", lim.Max)
	}
	low := syscall.Rlimit{Cur: 256, Max: lim.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) })
	if got := raiseFileLimit(slog.New(slog.DiscardHandler)); got != lim.Max {
		t.Fatalf("raiseFileLimit = %d, want the hard limit %d", got, lim.Max)
	}
	var now syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &now); err != nil || now.Cur != lim.Max {
		t.Fatalf("soft limit after raising: %d (%v), want %d", now.Cur, err, lim.Max)
	}
}

// TestConnBound: half the file limit unless given, never under 64.
func TestConnBound(t *testing.T) {
	for _, c := range []struct {
		given int
		files uint64
		want  int
	}{{0, 20000, 10000}, {500, 20000, 500}, {0, 100, 64}, {0, 0, 0}} {
		if got := connBound(c.given, c.files); got != c.want {
			t.Errorf("connBound(%d, %d) = %d, want %d", c.given, c.files, got, c.want)
		}
	}
}

// workerSecret is a WINDFORCE_SECRET long enough for checkSecret.
const workerSecret = "worker-test-secret-of-32-bytes-or-more"

// TestWorkerRefusesWeakSecret: `windforce worker` with a 1-byte secret
// stops before it opens anything.
func TestWorkerRefusesWeakSecret(t *testing.T) {
	_, err := parseWorkerFlags([]string{"--secret", "a"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "at least 32 bytes") {
		t.Fatalf("worker with a 1-byte secret: %v", err)
	}
}

// TestServerRefusesWeakSecrets: `windforce server` refuses a secret or an
// admin token under 32 bytes, from a flag or a variable, naming which.
func TestServerRefusesWeakSecrets(t *testing.T) {
	if _, err := parseServerFlags([]string{"--secret", "x"}, io.Discard); err == nil || !strings.Contains(err.Error(), "WINDFORCE_SECRET is 1 bytes") {
		t.Errorf("server with a 1-byte secret: %v", err)
	}
	t.Setenv("WINDFORCE_ADMIN_TOKEN", "a")
	if _, err := parseServerFlags(nil, io.Discard); err == nil || !strings.Contains(err.Error(), "WINDFORCE_ADMIN_TOKEN is 1 bytes") {
		t.Errorf("server with a 1-byte admin token: %v", err)
	}
	t.Setenv("WINDFORCE_ADMIN_TOKEN", workerSecret)
	if _, err := parseServerFlags([]string{"--metrics-token", "m"}, io.Discard); err == nil || !strings.Contains(err.Error(), "WINDFORCE_METRICS_TOKEN is 1 bytes") {
		t.Errorf("server with a 1-byte metrics token: %v", err)
	}
	if _, err := parseServerFlags([]string{"--secret", workerSecret}, io.Discard); err != nil {
		t.Errorf("server with long secrets: %v", err)
	}
}
