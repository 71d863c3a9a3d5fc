package relay

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/events/sink"
)

// natsReconnectWait is how soon a lost NATS connection is tried again.
const natsReconnectWait = 500 * time.Millisecond

// natsSink publishes each event to JetStream under {subject}.{workspace}.{type}.
type natsSink struct {
	prefix string
	nc     *nats.Conn
	js     jetstream.JetStream
}

// newNATS connects (in the background, forever: a NATS that is down now
// is reached when it is up) without a reconnect buffer, so a publish
// while disconnected fails at once instead of going out later behind the
// relay's back, after its retry, past the duplicate window.
func newNATS(sk sink.Sink, back func()) (*natsSink, error) {
	nc, err := nats.Connect(sk.URL,
		nats.Name("windforce relay "+sk.Workspace+"/"+sk.ID),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(natsReconnectWait),
		nats.ReconnectBufSize(-1),
		nats.ConnectHandler(func(*nats.Conn) { go back() }),
		nats.ReconnectHandler(func(*nats.Conn) { go back() }),
	)
	if err != nil {
		return nil, fmt.Errorf("event sink %s: connect to NATS: %w", sk.ID, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("event sink %s: JetStream: %w", sk.ID, err)
	}
	return &natsSink{prefix: sk.Subject, nc: nc, js: js}, nil
}

// Subject is where an event of workspace goes under prefix.
func Subject(prefix, workspace string, typ events.Type) string {
	return prefix + "." + workspace + "." + string(typ)
}

// StreamName is the stream the relay creates for a prefix that no stream
// covers: the prefix upper-cased, its dots as underscores.
func StreamName(prefix string) string {
	return strings.ToUpper(strings.ReplaceAll(prefix, ".", "_"))
}

// send publishes the CloudEvent with Nats-Msg-Id = the event id and
// returns once the stream acknowledged it (a duplicate inside the
// stream's window is acknowledged too: it is stored once). No stream on
// the subject: one covering {prefix}.> is created and the publish
// repeated.
func (n *natsSink) send(ctx context.Context, ev events.Event) error {
	if strings.ContainsAny(ev.Workspace, ".*> \t\r\n") {
		return fmt.Errorf("workspace %q cannot be a NATS subject token", ev.Workspace)
	}
	body, err := ev.Encode()
	if err != nil {
		return fmt.Errorf("encode event %s: %w", ev.ID, err)
	}
	msg := &nats.Msg{Subject: Subject(n.prefix, ev.Workspace, ev.Type), Data: body, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, ev.ID.String())
	msg.Header.Set("Content-Type", ContentType)
	_, err = n.js.PublishMsg(ctx, msg, jetstream.WithRetryAttempts(0))
	if errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) {
		if err := n.ensureStream(ctx); err != nil {
			return err
		}
		_, err = n.js.PublishMsg(ctx, msg, jetstream.WithRetryAttempts(0))
	}
	if err != nil {
		return fmt.Errorf("publish to %s: %w", msg.Subject, err)
	}
	return nil
}

// ensureStream creates the stream of the prefix, unless one covers it by
// now (another server made it meanwhile).
func (n *natsSink) ensureStream(ctx context.Context) error {
	all := n.prefix + ".>"
	if _, err := n.js.StreamNameBySubject(ctx, all); err == nil {
		return nil
	}
	_, err := n.js.CreateStream(ctx, jetstream.StreamConfig{Name: StreamName(n.prefix), Subjects: []string{all}})
	if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return fmt.Errorf("create stream %s for %s: %w", StreamName(n.prefix), all, err)
	}
	return nil
}

func (n *natsSink) close() { n.nc.Close() }
