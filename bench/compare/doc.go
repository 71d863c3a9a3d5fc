// Command compare runs the windforce bench and the same measurements on
// River (github.com/riverqueue/river), side by side in one run: same worker
// count, same no-op job, same duration, each in a fresh Postgres schema or
// SQLite file of its own, dropped afterwards. It is a separate Go module so
// that the windforce product never depends on River.
//
//	go run . --database-url postgres://… --duration 20s --workers 100
//	go run . --database-url sqlite:///tmp/cmp.db --duration 20s
//
// --event-sink gives windforce's workspace an event sink first: disabled
// (every transition writes its event, nothing delivers it: the cost of the
// writes) or nats (a relay in the process delivers every event to
// --nats-url: the whole cost); none, the default, records no events.
//
// Each system prints the JSON line of `windforce bench`; the last line is
// River's ("system":"river").
package main
