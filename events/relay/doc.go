// Package relay delivers the outbox's events to the workspaces' sinks
// (DESIGN §9): every `windforce server` (and `dev`) runs one.
//
//	wake-up (enqueue, completion) · poll ──▶ fan-out pass (one server at a time:
//	   event_outbox after the cursor ──▶ event_delivery rows, cursor moved, one tx)
//	   └▶ one worker per enabled sink:
//	        claim due deliveries (leased, FOR UPDATE SKIP LOCKED on Postgres;
//	        lowest pending seq per subject only) ──▶ up to Concurrency sends at once,
//	        no transaction open, each bounded by Timeout
//	        ──▶ settle (fenced on the lease): delivered | retry after backoff | failed after 24 h
//
// At least once: a delivery is settled only after the sink accepted it
// (a 2xx, the stream's PubAck), so a server that dies between the
// commit and the publish, or while a send is in flight, leaves it
// pending; its lease runs out and the next claim sends it again.
// Receivers deduplicate on the event id (NATS does, inside the stream's
// duplicate window, through the Nats-Msg-Id header). In order per
// subject and sink, a subject being a job (its id) or a git source (its
// id, for source.synced and source.sync_failed): of one subject only the
// lowest pending delivery is ever claimable. A slow or dead receiver holds its own sink's worker and
// lease only: the queue's transactions never wait on a send, and other
// sinks have workers of their own.
package relay
