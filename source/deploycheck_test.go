package source_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/windforce/windforce/internal/gittest"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/source/manifest"
)

// TestDeployBaseAndCheckFirst: a deploy made on a commit that is no longer
// the branch head is refused (ErrBranchMoved) and one whose manifest sync
// would refuse is refused before the push (ErrWouldNotSync with the
// manifest's reasons): in both the branch, the catalog and the source's
// error stay as they were. A good one on the head deploys.
func TestDeployBaseAndCheckFirst(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		r, first := e.helloSource(t)
		e.sync(t)
		r.Write(t, map[string]string{"notes.txt": "pushed meanwhile\n"})
		moved := r.CommitPush(t, "meanwhile")

		_, err := e.syncer.Deploy(t.Context(), ws, "main", source.DeployRequest{
			Files: map[string][]byte{"README.md": []byte("x\n")}, Base: first, CheckFirst: true,
		})
		if !errors.Is(err, source.ErrBranchMoved) || !strings.Contains(err.Error(), moved[:12]) {
			t.Fatalf("deploy on a stale base: %v, want ErrBranchMoved naming %.12s", err, moved)
		}
		if head := gittest.Git(t, r.Bare, "rev-parse", "main"); head != moved {
			t.Fatalf("a refused deploy moved the branch to %s", head)
		}

		_, err = e.syncer.Deploy(t.Context(), ws, "main", source.DeployRequest{
			Files: map[string][]byte{"windforce.yaml": []byte("apps: {}\n")}, Base: moved, CheckFirst: true,
		})
		if !errors.Is(err, source.ErrWouldNotSync) || !errors.Is(err, manifest.ErrInvalid) || !strings.Contains(err.Error(), "apps") {
			t.Fatalf("deploy of a bad manifest: %v, want ErrWouldNotSync with the manifest's reason", err)
		}
		if head := gittest.Git(t, r.Bare, "rev-parse", "main"); head != moved {
			t.Fatalf("a refused deploy moved the branch to %s", head)
		}
		if src := e.source(t); src.Error != "" {
			t.Fatalf("a deploy refused before its push recorded a sync error %q", src.Error)
		}
		e.requireCatalogAt(t, first)

		res, err := e.syncer.Deploy(t.Context(), ws, "main", source.DeployRequest{
			Files: map[string][]byte{"README.md": []byte("x\n")}, Base: moved, CheckFirst: true,
		})
		if err != nil {
			t.Fatalf("deploy on the head: %v", err)
		}
		if head := gittest.Git(t, r.Bare, "rev-parse", "main"); head != res.Commit || head == moved {
			t.Fatalf("deploy synced %s, remote head %s", res.Commit, head)
		}
		e.requireCatalogAt(t, res.Commit)
	})
}
