// Package e2e holds the end-to-end test of the whole path with real parts
// and no fakes, on both backend pairings (SQLite + file:// object cache,
// Postgres + postgres object cache):
//
//	git repo (bare remote, file://) holding examples/hello
//	  ──source.Syncer──▶ object cache + catalog (app hello: greet, sleep, fail)
//	  ──catalog EnqueueAction (trigger api)──▶ job
//	  ──spine.Worker + runner (real bun)──▶ success, failure, canceled
//
// A second set of tests starts the real windforce binary (built once per
// run, with -race) and drives it only through HTTP and the CLI:
//
//	dev_test.go      `windforce dev` on SQLite: the newcomer's two commands,
//	                 restart keeps state, each example action, cancel (the job
//	                 process is gone), the error table, tokens and scopes,
//	                 webhook HMAC (valid, tampered, stale, replayed)
//	cluster_test.go  2 × `windforce server` + 2 × `windforce worker` on one
//	                 fresh Postgres database: sync through one server, run
//	                 through the other, child jobs with WF_TOKEN, jobs on both
//	                 workers, an every-second schedule that no tick fires twice
//	events_*_test.go `windforce server` + `windforce worker` on a fresh
//	                 Postgres with an event sink: the server SIGKILLed while a
//	                 webhook receiver holds a delivery unanswered, and under a
//	                 stream of jobs with a NATS sink; after the restart every
//	                 event is delivered (in order per job, signed; in the
//	                 stream exactly once)
//
// The package has no code of its own; everything is in its tests. Run:
//
//	WINDFORCE_TEST_REQUIRE_BUN=1 WINDFORCE_TEST_REQUIRE_POSTGRES=1 WINDFORCE_TEST_REQUIRE_NATS=1 go test -race -count=1 ./internal/e2e/
package e2e
