package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/windforce/windforce/events/relay"
	"github.com/windforce/windforce/events/sink"
)

// The event sinks the bench's workspace may have (SinkMode).
const (
	// SinkNone: no sink, so the workspace records no events (the spine's
	// own cost).
	SinkNone = "none"
	// SinkDisabled: a disabled NATS sink and no relay, so every transition
	// writes its event but nothing delivers it: the cost of the writes.
	SinkDisabled = "disabled"
	// SinkNATS: an enabled NATS sink and a relay in this process that
	// delivers every event: the whole cost of events on.
	SinkNATS = "nats"
)

// AddEventSink gives the bench's workspace an event sink as mode says
// (SinkNone, SinkDisabled or SinkNATS); natsURL is the NATS server of the
// sink. For SinkNATS a relay runs until Close, and Close deletes the
// stream the relay made for the bench's own subject prefix.
func (w *Windforce) AddEventSink(ctx context.Context, mode, natsURL string) error {
	if mode == SinkNone || mode == "" {
		return nil
	}
	if mode != SinkDisabled && mode != SinkNATS {
		return fmt.Errorf("event sink %q: want %s, %s or %s", mode, SinkNone, SinkDisabled, SinkNATS)
	}
	prefix := "wfbench_" + randomHex(6)
	sk, err := w.store.CreateSink(ctx, sink.Sink{
		Workspace: jobParams(Tag).Workspace, ID: "bench", Kind: sink.KindNATS, URL: natsURL, Subject: prefix,
	})
	if err != nil {
		return fmt.Errorf("bench event sink: %w", err)
	}
	if mode == SinkDisabled {
		off := false
		if _, err := w.store.UpdateSink(ctx, sk.Workspace, sk.ID, sink.Patch{Enabled: &off}); err != nil {
			return fmt.Errorf("disable bench event sink: %w", err)
		}
		return nil
	}
	r := &relay.Relay{Store: w.store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := r.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start bench relay: %w", err)
	}
	w.closers = append(w.closers, func(ctx context.Context) error {
		r.Stop()
		return deleteStream(ctx, natsURL, relay.StreamName(prefix))
	})
	return nil
}

// deleteStream deletes the JetStream stream name at url (absent: nothing
// to do).
func deleteStream(ctx context.Context, url, name string) error {
	nc, err := nats.Connect(url)
	if err != nil {
		return fmt.Errorf("delete bench stream %s: %w", name, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("delete bench stream %s: %w", name, err)
	}
	if err := js.DeleteStream(ctx, name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("delete bench stream %s: %w", name, err)
	}
	return nil
}
