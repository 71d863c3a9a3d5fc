package sandbox

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A file kept open is read afresh from its start each time, whole when it
// outgrows the first buffer, and opened again after close.
func TestCgroupFilesReadFromTheStart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memory.current")
	var c cgroupFiles
	for _, want := range []string{"12345\n", "678\n", strings.Repeat("9", 10000) + "\n"} {
		// Written in place (the descriptor kept open sees it), as the
		// kernel regenerates a cgroup file for each read at offset 0.
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := c.read(path)
		if err != nil || string(got) != want {
			t.Fatalf("read %q (%v), want %q", got, err, want)
		}
	}
	c.close()
	if len(c.open) != 0 {
		t.Fatalf("%d files open after close", len(c.open))
	}
	if _, err := c.read(filepath.Join(t.TempDir(), "gone")); !os.IsNotExist(err) {
		t.Fatalf("a missing file: %v", err)
	}
}

// A long-lived tree's OOM count and memory are read fresh through the
// descriptors kept open: a member killed for memory after the first read
// shows in the next one.
func TestLongLivedTreeReadsItsCgroupFresh(t *testing.T) {
	t.Parallel()
	s, hide := newTest(t, Config{})
	dir := jobDir(t, hide)
	script := `while [ ! -e go ]; do sleep 0.02; done; head -c 300000000 /dev/zero | tail > /dev/null; touch hogged; sleep 60`
	p, err := s.Start(Spec{Name: "t-fresh-" + strconv.FormatInt(time.Now().UnixNano(), 36), Argv: []string{"/bin/sh", "-c", script},
		Env: []string{"PATH=/usr/bin:/bin"}, Dir: dir, Writable: []string{dir}, Limits: Limits{Memory: 64 << 20},
		Stdout: io.Discard, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { p.Stop(0); p.Wait() }()
	if p.OOMKilled() {
		t.Fatal("OOM killed before anything ran")
	}
	if n, ok := p.MemoryUsage(); !ok || n < 0 {
		t.Fatalf("memory usage %d, %v", n, ok)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !fileExists(filepath.Join(dir, "hogged")) {
		if time.Now().After(deadline) {
			t.Fatal("the hog did not end within 30s")
		}
		time.Sleep(20 * time.Millisecond) // polling for the script's marker, with a deadline
	}
	if !p.OOMKilled() {
		t.Fatal("a member killed for memory does not show in the OOM count read again")
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
