package events

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// Type is an event's type as event_outbox stores it, without the
// "windforce." prefix its CloudEvent carries.
type Type string

// The closed set of event types (DESIGN §9).
const (
	// JobQueued: a job was enqueued (or put back to waiting by a reopen
	// or a worker's release on shutdown).
	JobQueued Type = "job.queued"
	// JobStarted: a worker claimed the job and runs an attempt.
	JobStarted Type = "job.started"
	// JobRetrying: an attempt ended without finishing the job: it failed
	// with attempts left, or its worker died and the reaper requeued it.
	JobRetrying Type = "job.retrying"
	// JobSucceeded, JobFailed and JobCanceled: the job finished.
	JobSucceeded Type = "job.succeeded"
	JobFailed    Type = "job.failed"
	JobCanceled  Type = "job.canceled"
	// SourceSynced: a git source's commit is in the catalog.
	SourceSynced Type = "source.synced"
	// SourceSyncFailed: a sync failed; the catalog is as it was.
	SourceSyncFailed Type = "source.sync_failed"
)

// Types lists every event type, in the order of a job's life.
var Types = []Type{
	JobQueued, JobStarted, JobRetrying, JobSucceeded, JobFailed, JobCanceled, SourceSynced, SourceSyncFailed,
}

// Valid reports whether t is one of the known event types.
func (t Type) Valid() bool {
	for _, k := range Types {
		if t == k {
			return true
		}
	}
	return false
}

// Finished is the event of a job that reached the terminal status s:
// JobSucceeded, JobFailed or JobCanceled, and "" for a live status.
func Finished(s spine.Status) Type {
	switch s {
	case spine.StatusSuccess:
		return JobSucceeded
	case spine.StatusFailure:
		return JobFailed
	case spine.StatusCanceled:
		return JobCanceled
	}
	return ""
}

// Event is one event of event_outbox (a batch statement's events share a row).
type Event struct {
	// Seq is the outbox order: a later event of the same job (or source)
	// always has a higher Seq.
	Seq int64
	// ID is the event's UUIDv7, the CloudEvent id receivers deduplicate
	// on (and the NATS Nats-Msg-Id).
	ID        uuid.UUID
	Workspace string
	Type      Type
	// Subject is the job id, or the source id for a source event.
	Subject string
	// Time is when the change happened.
	Time time.Time
	// Data is the CloudEvent's data: the job in its API shape without its
	// input, or the source's API view.
	Data json.RawMessage
}

// CloudEvent is an event in the CloudEvents 1.0 JSON format
// (https://github.com/cloudevents/spec, structured content mode).
type CloudEvent struct {
	SpecVersion     string          `json:"specversion"`
	ID              string          `json:"id"`
	Source          string          `json:"source"`
	Type            string          `json:"type"`
	Time            string          `json:"time"`
	Subject         string          `json:"subject"`
	DataContentType string          `json:"datacontenttype"`
	Data            json.RawMessage `json:"data"`
}

// The CloudEvents attributes every windforce event carries.
const (
	SpecVersion = "1.0"
	// TypePrefix is put before Type in the CloudEvent's type.
	TypePrefix = "windforce."
	// ContentType is the data's content type.
	ContentType = "application/json"
)

// Source is the CloudEvent source of a workspace's events.
func Source(workspace string) string { return "windforce/" + workspace }

// CloudEvent is e in the CloudEvents 1.0 format: source
// "windforce/{workspace}", type "windforce.{type}", time in RFC 3339
// (UTC, nanoseconds as stored).
func (e Event) CloudEvent() CloudEvent {
	data := e.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	return CloudEvent{
		SpecVersion:     SpecVersion,
		ID:              e.ID.String(),
		Source:          Source(e.Workspace),
		Type:            TypePrefix + string(e.Type),
		Time:            e.Time.UTC().Format(time.RFC3339Nano),
		Subject:         e.Subject,
		DataContentType: ContentType,
		Data:            data,
	}
}

// Encode is e as CloudEvents 1.0 JSON: the body a webhook sink posts and a
// NATS sink publishes.
func (e Event) Encode() ([]byte, error) {
	b, err := json.Marshal(e.CloudEvent())
	if err != nil {
		return nil, fmt.Errorf("encode event %s as a CloudEvent: %w", e.ID, err)
	}
	return b, nil
}
