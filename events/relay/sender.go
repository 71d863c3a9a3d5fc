package relay

import (
	"context"
	"fmt"
	"time"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/events/sink"
)

// sender delivers events to one sink; send returns nil only once the
// sink accepted the event.
type sender interface {
	send(ctx context.Context, ev events.Event) error
	close()
}

// newSender builds the sender of sk; back is called whenever the sink
// becomes reachable again after it was not (NATS only).
func newSender(sk sink.Sink, timeout time.Duration, back func()) (sender, error) {
	switch sk.Kind {
	case sink.KindWebhook:
		return newWebhook(sk, timeout)
	case sink.KindNATS:
		return newNATS(sk, back)
	}
	return nil, fmt.Errorf("event sink %s: unknown kind %q", sk.ID, sk.Kind)
}
