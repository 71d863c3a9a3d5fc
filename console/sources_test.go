package console_test

import (
	"strings"
	"testing"

	"github.com/windforce/windforce/catalog"
)

// TestSourcesPageRedactsCredentials: a source row stored with a token in
// its URL (before such URLs were refused) and a sync error quoting it show
// neither on the sources page or the job page.
func TestSourcesPageRedactsCredentials(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		const secretURL = "https://ghp_leakedtoken@example.invalid/r.git?access_token=leaked2"
		if err := e.db.PutSource(t.Context(), catalog.Source{Workspace: "ws", ID: "old", URL: secretURL, Branch: "main"}); err != nil {
			t.Fatal(err)
		}
		if err := e.db.RecordSyncError(t.Context(), "ws", "old", "fetch failed: fatal: unable to access '"+secretURL+"'"); err != nil {
			t.Fatal(err)
		}
		b := e.browser()
		b.login(adminToken)
		page := b.get("/w/ws/sources").want(200).contains("example.invalid", "unable to access")
		for _, leak := range []string{"ghp_leakedtoken", "leaked2"} {
			if strings.Contains(page.body, leak) {
				t.Fatalf("sources page shows %q:\n%s", leak, page.body)
			}
		}
	})
}
