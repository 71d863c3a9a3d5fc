// Package console is windforce's web console (DESIGN §5): the pages an
// operator and an action author keep open all day, served by `windforce
// server` and `windforce dev` at "/".
//
// It is server-rendered html/template with htmx (vendored in static/, no
// CDN, no build step), embedded in the binary with go:embed:
//
//	login (API token) ─▶ signed session cookie (token hash + expiry + CSRF key)
//	   every request: verify signature ─▶ look the token up again (revocation is immediate)
//	   every POST:    CSRF token (hidden field, or X-CSRF-Token from hx-headers)
//	/w/{ws}/runs      jobs with filters, counts, cursor paging, live refresh
//	/w/{ws}/jobs/{id} timeline, pin, input/result, error, live logs, cancel/reopen/run again
//	/w/{ws}/apps      catalog per source and commit; action page with the run form
//	/w/{ws}/sources   sync status and "Sync now"
//	/w/{ws}/schedules cron schedules with a "next 5 runs" preview
//	/w/{ws}/health    queue health and completions per minute (inline SVG)
//
// Everything is read straight from the store, and every write goes through
// the same paths as the HTTP API: catalog.Enqueuer over
// catalog.Store.EnqueueAction (trigger manual; counted in
// windforce_jobs_enqueued_total like the API's), spine.Store.Cancel and
// Reopen, source.Syncer.Sync. Scopes are the API's, from one table: each
// page names its auth.Action and needs auth.Need of it (read to view, run
// to run and cancel, operator to reopen, admin for sources and schedules).
package console
