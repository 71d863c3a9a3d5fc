package source_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/windforce/windforce/source"
)

// TestInitRepo: a bare repository with one commit of the files appears at
// the path, nothing half-built is left beside it, and a second call
// refuses to touch it.
func TestInitRepo(t *testing.T) {
	dir := t.TempDir()
	bare := filepath.Join(dir, "git", "hello.git")
	files := fstest.MapFS{"windforce.yaml": {Data: []byte("apps: {}\n")}, "src/main.ts": {Data: []byte("export default 1\n")}}
	g := &source.Git{}
	if err := g.InitRepo(t.Context(), bare, "main", files, "first"); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "--git-dir", bare, "ls-tree", "-r", "--name-only", "main").CombinedOutput()
	if err != nil || strings.Fields(string(out))[0] != "src/main.ts" || len(strings.Fields(string(out))) != 2 {
		t.Fatalf("tree of main: %q, %v", out, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(bare))
	if len(entries) != 1 {
		t.Fatalf("left beside the repository: %v", entries)
	}
	if err := g.InitRepo(t.Context(), bare, "main", files, "again"); err == nil {
		t.Fatal("a second InitRepo overwrote the repository")
	}
}
