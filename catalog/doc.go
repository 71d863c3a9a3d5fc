// Package catalog is the list of runnable apps and actions of each
// workspace, and the one enqueue path that pins them into jobs (DESIGN §3).
//
// The catalog is filled only by sync (package source): a sync writes the
// tree of commit C to the object cache, marker last, and only then calls
// Store.ApplySync, which replaces the apps and actions of that source in one
// transaction. So the catalog never names a commit whose tree is incomplete.
//
//	git ──sync──▶ object cache (marker last) ──▶ ApplySync (one transaction)
//	                                                   │
//	                                 git_source ◀──────┤
//	                                 app ◀─────────────┤
//	                                 action ◀──────────┘
//
//	trigger ──▶ Store.Enqueue (one transaction)
//	              resolve (workspace, app, action)   ─▶ ErrNotFound, no row
//	              validate input vs input schema     ─▶ *InputError, no row
//	              Resolve: copy commit, entrypoint, runtime, schemas,
//	                       timeout, tag, retry into spine.Pin
//	              insert job + job_queue in the same transaction
//
// A job keeps its pin whatever is synced later: a redeploy never changes a
// queued job. Implementation: the store core (package store), on each
// database; the suite in catalog/catalogtest checks both.
package catalog
