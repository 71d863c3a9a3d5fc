// Package sink is where a workspace's events go (DESIGN §9): the sinks
// (a NATS JetStream subject prefix or a signed webhook) and the delivery of
// each event to each sink, with the rules both keep: what a valid sink is,
// how a webhook secret looks, and how a failed delivery backs off.
//
//	event_outbox ──fan-out──▶ event_delivery (one row per event and sink)
//	   (seq order)                │ pending ─claim (lease)─▶ send ─▶ delivered
//	                              │    ▲                       │
//	                              │    └── retry: 1 s doubling, ≤ 5 min ──┘
//	                              └─ past 24 h ─▶ failed (kept, shown)
//
// The store core (package store) implements Store on both databases; the
// relay (package events/relay) moves deliveries from pending to
// delivered or failed.
package sink

import (
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/events"
)

// Kind is what a sink delivers to.
type Kind string

// The kinds of sink.
const (
	// KindNATS publishes each event to NATS JetStream.
	KindNATS Kind = "nats"
	// KindWebhook POSTs each event, signed (Standard Webhooks).
	KindWebhook Kind = "webhook"
)

// DefaultSubject is the subject prefix of a sink created without one.
const DefaultSubject = "windforce"

// Sink is one destination of a workspace's events.
type Sink struct {
	Workspace string
	ID        string
	Kind      Kind
	// URL is nats://host:port for nats, http(s)://… for webhook.
	URL string
	// Subject is the NATS subject prefix: events go to
	// {Subject}.{workspace}.{type}. Webhooks ignore it.
	Subject string
	// Types are the event types the sink receives ("job.succeeded" …);
	// empty means all.
	Types []string
	// Secret is the webhook signing secret (whsec_…); empty for nats. It
	// is never shown by the API after the create that generated it.
	Secret  string
	Enabled bool
	// AfterSeq is the outbox position at the sink's creation: the sink
	// receives only events written after it (seq > AfterSeq).
	AfterSeq  int64
	CreatedBy string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Wants reports whether the sink receives events of type typ.
func (s Sink) Wants(typ string) bool {
	if len(s.Types) == 0 {
		return true
	}
	for _, t := range s.Types {
		if t == typ {
			return true
		}
	}
	return false
}

// Patch changes some fields of a sink; a nil field stays as it is.
type Patch struct {
	URL     *string
	Subject *string
	Types   *[]string
	Enabled *bool
	Secret  *string
}

// Status is where one event's delivery to one sink stands.
type Status string

// The statuses of a delivery.
const (
	// StatusPending waits for its (next) attempt.
	StatusPending Status = "pending"
	// StatusDelivered was accepted by the sink (2xx, or the stream's ack).
	StatusDelivered Status = "delivered"
	// StatusFailed was retried for MaxAge without success and is given up.
	StatusFailed Status = "failed"
)

// Valid reports whether st is one of the statuses.
func (st Status) Valid() bool {
	return st == StatusPending || st == StatusDelivered || st == StatusFailed
}

// Delivery is one event's delivery to one sink.
type Delivery struct {
	Workspace string
	SinkID    string
	// EventSeq is the event's outbox position; EventID its CloudEvent id.
	EventSeq  int64
	EventID   uuid.UUID
	EventType string
	// Subject is the event's subject (the job or source id): deliveries of
	// one subject to one sink go out in EventSeq order.
	Subject       string
	Status        Status
	Attempts      int
	NextAttemptAt time.Time
	LastError     string
	// CreatedAt is when the delivery was made (the fan-out); the retry
	// window (MaxAge) counts from it.
	CreatedAt   time.Time
	DeliveredAt *time.Time
	FailedAt    *time.Time
}

// Claimed is a delivery leased for one attempt, with the event it carries.
type Claimed struct {
	Delivery
	Event events.Event
}

// DeliveryFilter selects a page of a sink's deliveries, newest first.
type DeliveryFilter struct {
	// Status is one status, or "" for all.
	Status Status
	// Before is the cursor: deliveries with EventSeq < Before (0: from
	// the newest).
	Before int64
	// Limit bounds the page (1..1000; 0 means 100).
	Limit int
}
