// Command compare runs the windforce bench and the same measurements on
// River (github.com/riverqueue/river), side by side in one run: same worker
// count, same no-op job, same duration, each in a fresh Postgres schema or
// SQLite file of its own, dropped afterwards. It is a separate Go module so
// that the windforce product never depends on River.
//
//	go run . --database-url postgres://… --duration 20s --workers 100
//	go run . --database-url sqlite:///tmp/cmp.db --duration 20s
//
// Each system prints the JSON line of `windforce bench`; the last line is
// River's ("system":"river").
package main
