package cli

import (
	"log/slog"
	"time"

	"github.com/windforce/windforce/events/relay"
)

// relayFlags are the event relay's settings (server and dev).
type relayFlags struct {
	timeout, poll time.Duration
	concurrency   int
}

// relay is the event relay over s with these settings.
func (f relayFlags) relay(s relay.Store, log *slog.Logger) *relay.Relay {
	return &relay.Relay{Store: s, Timeout: f.timeout, Poll: f.poll, Concurrency: f.concurrency, Logger: log}
}
