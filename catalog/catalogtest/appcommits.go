package catalogtest

import (
	"reflect"
	"testing"

	"github.com/windforce/windforce/catalog"
)

// testAppCommits: AppCommits follows every sync of the workspace's
// sources (a newer commit, an app removed from the manifest) and nothing
// of another workspace.
func testAppCommits(t *testing.T, newStore func(t *testing.T) Store) {
	t.Parallel()
	s := setup(t, newStore)
	ctx := t.Context()
	want := func(step string, w ...catalog.AppCommit) {
		t.Helper()
		got, err := s.AppCommits(ctx, ws)
		if err != nil {
			t.Fatalf("%s: AppCommits: %v", step, err)
		}
		if len(got) != len(w) || (len(w) > 0 && !reflect.DeepEqual(got, w)) {
			t.Fatalf("%s: AppCommits = %+v, want %+v", step, got, w)
		}
	}
	want("before any sync")
	if err := s.PutSource(ctx, catalog.Source{Workspace: "ws-other", ID: srcID, URL: "file:///x", Branch: "main"}); err != nil {
		t.Fatal(err)
	}
	if err := s.ApplySync(ctx, catalog.SyncParams{Workspace: "ws-other", SourceID: srcID, Commit: commitB, Apps: []catalog.App{appAt(commitB)}}); err != nil {
		t.Fatal(err)
	}
	world := appAt(commitA)
	world.Key = "world"
	apply(t, s, commitA, appAt(commitA), world)
	want("at A", catalog.AppCommit{AppKey: "hello", SourceID: srcID, CommitSHA: commitA},
		catalog.AppCommit{AppKey: "world", SourceID: srcID, CommitSHA: commitA})
	apply(t, s, commitB, appAt(commitB))
	want("at B without world", catalog.AppCommit{AppKey: "hello", SourceID: srcID, CommitSHA: commitB})
	apply(t, s, commitA)
	want("no apps")
}
