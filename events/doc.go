// Package events is what windforce tells other services (DESIGN §9, seed
// 003): the event types, the outbox row (Event) and its CloudEvents 1.0
// JSON encoding.
//
// Work that starts and ends in windforce's database is the queue's; a
// fact another service must act on (a job finished, a source synced)
// leaves through a transactional outbox. The store core writes each
// state change's event into event_outbox in the same transaction as the
// change, so the two commit together or not at all: a server that dies
// right after the commit loses nothing, and a rolled-back change leaves
// no event behind. The relay, on every server, reads the outbox in order
// and delivers each event to the workspace's sinks at least once; the
// receivers deduplicate on the event id. A workspace records events only
// while it has a sink (one index probe of event_sink guards each write), so
// a queue nobody listens to pays nothing for them.
//
//	enqueue · claim · complete · fail · cancel · reap · reopen · sync
//	     │ one transaction: the state change + its event_outbox row(s)
//	     ▼
//	event_outbox: one row per single change, one per workspace for a
//	batch statement's events (claim, batch enqueue and completion), each
//	event with its own seq, id, type, subject, time and data when read
//	     │ store.EventsAfter(workspace, seq, limit): committed, in seq order
//	     ▼
//	relay (every server; SKIP LOCKED on Postgres, in process on SQLite)
//	     ├──▶ nats sink:    JetStream publish, Nats-Msg-Id = event id, ack = delivered
//	     └──▶ webhook sink: Standard Webhooks signed POST, 2xx = delivered
//	     (also: `windforce events tail`, the console's live events)
//
// A job event's data is the job in its API shape (GET /api/w/{ws}/jobs/{id})
// without its input, as it is right after the change. A source event's
// data is the source's API view (source.View, GET /api/w/{ws}/sources) as
// the sync left it: source.synced is written in the transaction that
// writes the commit's apps into the catalog (store ApplySync),
// source.sync_failed in the one that records the error on the source
// (RecordSyncError), and neither when the sync changed nothing (the
// branch already synced, the same error again). Events of one subject (a
// job, a source) reach each sink in the order written.
package events
