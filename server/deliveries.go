package server

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/windforce/windforce/events/sink"
)

// Page sizes of GET …/event-sinks/{id}/deliveries.
const (
	DefaultDeliveriesLimit = 50
	MaxDeliveriesLimit     = 500
)

// DeliveryView is one event's delivery to one sink as the API shows it.
type DeliveryView struct {
	EventID string `json:"event_id"`
	// Seq is the event's position in the workspace's outbox (GET …/events).
	Seq     int64  `json:"seq"`
	Type    string `json:"type"`
	Subject string `json:"subject"`
	// Status is pending, delivered or failed.
	Status   string `json:"status"`
	Attempts int    `json:"attempts"`
	// NextAttemptAt is when a pending delivery is tried next; null once
	// it is delivered or failed.
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	LastError     string     `json:"last_error"`
	CreatedAt     time.Time  `json:"created_at"`
	DeliveredAt   *time.Time `json:"delivered_at"`
	FailedAt      *time.Time `json:"failed_at"`
}

// ViewDelivery is d in its API shape.
func ViewDelivery(d sink.Delivery) DeliveryView {
	v := DeliveryView{EventID: d.EventID.String(), Seq: d.EventSeq, Type: d.EventType, Subject: d.Subject,
		Status: string(d.Status), Attempts: d.Attempts, LastError: d.LastError, CreatedAt: d.CreatedAt,
		DeliveredAt: d.DeliveredAt, FailedAt: d.FailedAt}
	if d.Status == sink.StatusPending && !d.NextAttemptAt.IsZero() {
		next := d.NextAttemptAt
		v.NextAttemptAt = &next
	}
	return v
}

// DeliveryCounts is how many of a sink's deliveries are in each status.
type DeliveryCounts struct {
	Pending   int `json:"pending"`
	Delivered int `json:"delivered"`
	Failed    int `json:"failed"`
}

// listDeliveries answers GET /api/w/{ws}/event-sinks/{id}/deliveries:
// {"deliveries":[…],"next_cursor"}, newest event first, filtered by
// ?status=pending|delivered|failed, plus "counts" per status with
// ?counts=1; 404 for an unknown sink.
func (s *Server) listDeliveries(_ http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	f, err := parseDeliveriesQuery(r.URL.Query())
	if err != nil {
		return nil, err
	}
	want := f.Limit
	// One more than asked says whether a next page exists.
	f.Limit = want + 1
	list, err := s.cfg.Store.ListDeliveries(r.Context(), r.PathValue("ws"), r.PathValue("id"), f)
	if err != nil {
		return nil, err
	}
	var next *string
	if len(list) > want {
		list = list[:want]
		c := strconv.FormatInt(list[want-1].EventSeq, 10)
		next = &c
	}
	views := make([]DeliveryView, 0, len(list))
	for _, d := range list {
		views = append(views, ViewDelivery(d))
	}
	out := map[string]any{"deliveries": views, "next_cursor": next}
	if flag(r.URL.Query().Get("counts")) {
		c, err := s.cfg.Store.DeliveryCounts(r.Context(), r.PathValue("ws"), r.PathValue("id"))
		if err != nil {
			return nil, err
		}
		out["counts"] = DeliveryCounts{Pending: c[sink.StatusPending], Delivered: c[sink.StatusDelivered], Failed: c[sink.StatusFailed]}
	}
	return out, nil
}

// parseDeliveriesQuery reads status, limit and cursor (the next_cursor of
// the previous page: the seq the next page starts below).
func parseDeliveriesQuery(q url.Values) (sink.DeliveryFilter, error) {
	f := sink.DeliveryFilter{Limit: DefaultDeliveriesLimit}
	if v := q.Get("status"); v != "" {
		if !sink.Status(v).Valid() {
			return f, badParam("status", v, "want pending, delivered or failed")
		}
		f.Status = sink.Status(v)
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxDeliveriesLimit {
			return f, badParam("limit", v, "want an integer from 1 to "+strconv.Itoa(MaxDeliveriesLimit))
		}
		f.Limit = n
	}
	if v := q.Get("cursor"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return f, badParam("cursor", v, "want the next_cursor of a previous page")
		}
		f.Before = n
	}
	return f, nil
}
