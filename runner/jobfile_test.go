package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadJobFile: only a regular file within the bound is read; a FIFO
// (opened without blocking), a link, a device, a directory or a file over
// the bound is a Failure, and a missing file is errNoJobFile.
func TestReadJobFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(path("ok"), []byte(`{"a":1}`), 0o644))
	must(os.WriteFile(path("big"), make([]byte, 2048), 0o644))
	must(syscall.Mkfifo(path("fifo"), 0o644))
	must(os.Symlink("/dev/zero", path("zero")))
	must(os.Symlink(path("ok"), path("link")))
	must(os.Mkdir(path("dir"), 0o755))
	if data, err := readJobFile(path("ok"), 1024); err != nil || string(data) != `{"a":1}` {
		t.Fatalf("regular file: %q %v", data, err)
	}
	if _, err := readJobFile(path("none"), 1024); !errors.Is(err, errNoJobFile) {
		t.Fatalf("missing file: %v", err)
	}
	for name, want := range map[string]string{
		"fifo": "not a regular file (a FIFO)", "zero": "is a symbolic link", "link": "is a symbolic link",
		"dir": "not a regular file (a directory)", "big": "is 2048 bytes, over the limit of 1024",
	} {
		_, err := readJobFile(path(name), 1024)
		var f *Failure
		if !errors.As(err, &f) || !strings.Contains(f.Message, want) {
			t.Errorf("%s: %v, want a Failure saying %q", name, err, want)
		}
	}
	if _, err := readJobFile("/dev/null", 1024); err == nil {
		t.Error("/dev/null was read as a job file")
	}
}
