package sandbox

import (
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
)

// TestSubordinate reads a non-root worker's range from /etc/subuid's
// format, by name or by uid, and says what is missing otherwise.
func TestSubordinate(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "subuid")
	if err := os.WriteFile(file, []byte("other:100000:65536\nwf:200000:65536\n1001:300000:1000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		u            user.User
		start, count uint32
		err          string
	}{
		{user.User{Username: "wf", Uid: "999"}, 200000, 65536, ""},
		{user.User{Username: "nobody-here", Uid: "1001"}, 300000, 1000, ""},
		{user.User{Username: "ghost", Uid: "4242"}, 0, 0, "has no range for ghost"},
	} {
		start, count, err := subordinate(file, &tc.u)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want an error saying %q", tc.u.Username, err, tc.err)
			}
			continue
		}
		if err != nil || start != tc.start || count != tc.count {
			t.Errorf("%s: %d+%d %v, want %d+%d", tc.u.Username, start, count, err, tc.start, tc.count)
		}
	}
	if _, _, err := subordinate(filepath.Join(t.TempDir(), "none"), &user.User{Username: "wf"}); err == nil {
		t.Error("a missing /etc/subuid was accepted")
	}
}

// TestUIDPool: a leased uid is not leased again until released, and the
// pool says so when it is exhausted.
func TestUIDPool(t *testing.T) {
	t.Parallel()
	p := newUIDPool(5000, 2)
	a, err1 := p.acquire()
	b, err2 := p.acquire()
	if err1 != nil || err2 != nil || a == b || a < 5000 || b > 5001 {
		t.Fatalf("leases %d %d (%v %v)", a, b, err1, err2)
	}
	if _, err := p.acquire(); err == nil {
		t.Fatal("a third uid from a pool of two")
	}
	p.release(a)
	if c, err := p.acquire(); err != nil || c != a {
		t.Fatalf("after release: %d %v, want %d", c, err, a)
	}
}
