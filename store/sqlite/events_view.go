package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"

	"github.com/google/uuid"

	"github.com/windforce/windforce/events"
)

// What people look at of the events (queries/events_recent.sql).
const (
	qEventsRecent query = "events_recent"
)

// EventsRecent is driver.EventViewExecutor.EventsRecent, on the reader
// pool.
func (e *executor) EventsRecent(ctx context.Context, workspace string, limit int) ([]events.Event, error) {
	rows, err := e.read(ctx, qEventsRecent, sql.Named("workspace", workspace), sql.Named("limit", limit))
	if err != nil {
		return nil, translate(err)
	}
	return collect(rows, scanEvent)
}

// scanEvent reads one event_view row (seq, id, nth, workspace, type,
// subject, time, data): the event's id is its row's id moved by its place
// in the row (nthEventID).
func scanEvent(rows *sql.Rows) (events.Event, error) {
	var ev events.Event
	var nth, at int64
	var data string
	err := rows.Scan(&ev.Seq, &ev.ID, &nth, &ev.Workspace, &ev.Type, &ev.Subject, &at, &data)
	ev.ID, ev.Time, ev.Data = nthEventID(ev.ID, nth), fromMicros(at), []byte(data)
	return ev, err
}

// nthEventID is the id of the event at place nth of an outbox row whose
// (first) event has id (migration 0021): nth added to the UUIDv7's 62
// random low bits, modulo 2^62, version and variant kept. The events of one
// row get distinct ids, the first the row's own, the same on every read;
// two rows' ranges meet only if their random bits lie within a batch of
// each other in the same millisecond.
func nthEventID(id uuid.UUID, nth int64) uuid.UUID {
	if nth == 0 {
		return id
	}
	const low = 1<<62 - 1
	b := binary.BigEndian.Uint64(id[8:])
	binary.BigEndian.PutUint64(id[8:], b&^low|(b+uint64(nth))&low)
	return id
}
