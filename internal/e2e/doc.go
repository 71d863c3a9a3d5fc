// Package e2e holds the end-to-end test of the whole path with real parts
// and no fakes, on both backend pairings (SQLite + file:// object cache,
// Postgres + postgres object cache):
//
//	git repo (bare remote, file://) holding examples/hello
//	  ──source.Syncer──▶ object cache + catalog (app hello: greet, sleep, fail)
//	  ──catalog EnqueueAction (trigger api)──▶ job
//	  ──spine.Worker + runner (real bun)──▶ success, failure, canceled
//
// The package has no code of its own; everything is in its tests. Run:
//
//	WINDFORCE_TEST_REQUIRE_BUN=1 WINDFORCE_TEST_REQUIRE_POSTGRES=1 go test -race -count=1 ./internal/e2e/
package e2e
