package e2e_test

import (
	"testing"

	"github.com/windforce/windforce/internal/gittest"
)

// helloRemote creates a bare remote holding examples/hello on branch main
// and returns its file:// URL and the commit.
func helloRemote(t *testing.T) (url, commit string) {
	t.Helper()
	r := gittest.New(t)
	r.CopyDir(t, gittest.Example("hello"))
	return r.URL, r.CommitPush(t, "hello example")
}
