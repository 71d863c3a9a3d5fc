package source_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/windforce/windforce/internal/gittest"
	"github.com/windforce/windforce/source"
)

// TestGitFetch reads a commit's tree with modes and links as git records
// them, and refuses a tree over the size limit.
func TestGitFetch(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write(t, map[string]string{"run.sh": "#!/bin/sh\n", "data/big.txt": strings.Repeat("x", 4096)})
	if err := os.Chmod(filepath.Join(r.Work, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("run.sh", filepath.Join(r.Work, "link")); err != nil {
		t.Fatal(err)
	}
	commit := r.CommitPush(t, "A")

	g := &source.Git{}
	head, err := g.RemoteHead(t.Context(), r.URL, "main")
	if err != nil || head != commit {
		t.Fatalf("remote head = %s, %v; want %s", head, err, commit)
	}
	got, files, err := g.Fetch(t.Context(), r.URL, "main")
	if err != nil || got != commit {
		t.Fatalf("fetch = %s, %v", got, err)
	}
	modes := map[string]fs.FileMode{}
	for _, f := range files {
		modes[f.Path] = f.Mode
	}
	if modes["run.sh"] != 0o755 || modes["data/big.txt"] != 0o644 || modes["link"] != fs.ModeSymlink|0o777 || len(files) != 3 {
		t.Fatalf("files = %v", modes)
	}
	for _, f := range files {
		if f.Path == "link" && string(f.Data) != "run.sh" {
			t.Fatalf("link target = %q", f.Data)
		}
	}

	_, _, err = (&source.Git{MaxTreeBytes: 1024}).Fetch(t.Context(), r.URL, "main")
	if err == nil || !strings.Contains(err.Error(), "exceed") {
		t.Fatalf("fetch over the limit: %v", err)
	}
	_, _, err = g.Fetch(t.Context(), r.URL, "nope")
	var ge *source.GitError
	if !errors.As(err, &ge) {
		t.Fatalf("fetch of a missing branch: %v; want a *GitError", err)
	}
	if _, err := g.RemoteHead(t.Context(), r.URL, "nope"); err == nil {
		t.Fatal("remote head of a missing branch succeeded")
	}
}
