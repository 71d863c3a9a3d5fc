package migrate

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoadOrdersAndChecksGaps(t *testing.T) {
	t.Parallel()
	good := fstest.MapFS{
		"m/0002_more.sql":  {Data: []byte("B")},
		"m/0001_first.sql": {Data: []byte("A")},
		"m/README.md":      {Data: []byte("ignored")},
	}
	ms, err := Load(good, "m")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Name != "first" || ms[1].SQL != "B" {
		t.Fatalf("unexpected migrations: %+v", ms)
	}

	cases := map[string]fstest.MapFS{
		"gap":     {"m/0001_a.sql": {}, "m/0003_c.sql": {}},
		"twice":   {"m/0001_a.sql": {}, "m/0001_b.sql": {}},
		"badname": {"m/first.sql": {}},
		"zero":    {"m/0000_a.sql": {}},
	}
	for name, fsys := range cases {
		if _, err := Load(fsys, "m"); err == nil {
			t.Errorf("%s: Load accepted a bad set", name)
		}
	}
}

func TestPendingRefusesNewerDatabase(t *testing.T) {
	t.Parallel()
	ms := []Migration{{Version: 1}, {Version: 2}}
	p, err := Pending(ms, 1)
	if err != nil || len(p) != 1 || p[0].Version != 2 {
		t.Fatalf("Pending(1) = %v, %v", p, err)
	}
	if _, err := Pending(ms, 3); err == nil || !strings.Contains(err.Error(), "upgrade") {
		t.Fatalf("Pending(3) = %v, want an upgrade error", err)
	}
}

// TestBefore returns the migrations before a named one and refuses an
// unknown name.
func TestBefore(t *testing.T) {
	t.Parallel()
	ms := []Migration{{Version: 1, Name: "a"}, {Version: 2, Name: "b"}, {Version: 3, Name: "c"}}
	got, err := Before(ms, "c")
	if err != nil || len(got) != 2 || got[1].Name != "b" {
		t.Fatalf("Before(c) = %v, %v", got, err)
	}
	if got, err := Before(ms, "a"); err != nil || len(got) != 0 {
		t.Fatalf("Before(a) = %v, %v", got, err)
	}
	if _, err := Before(ms, "z"); err == nil {
		t.Fatal("Before(z) found a migration")
	}
}
