package browsertest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRepoRoot: from a package directory the root is the directory above
// it that holds go.mod (where docs/img lives), not the working directory.
func TestRepoRoot(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("root %s holds no go.mod: %v", root, err)
	}
	wd, _ := os.Getwd()
	if want := filepath.Dir(filepath.Dir(wd)); root != want {
		t.Fatalf("root %s, want %s (two levels above %s)", root, want, wd)
	}
}
