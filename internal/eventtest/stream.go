package eventtest

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// StreamMsg is one message of a JetStream stream as a test reads it back.
type StreamMsg struct {
	Subject string
	// MsgID is the Nats-Msg-Id header (the relay's event id).
	MsgID string
	Data  []byte
}

// ReadStream connects to url and reads every message of the stream, in
// stream order; it fails t when the stream is not there.
func ReadStream(t testing.TB, url, name string) []StreamMsg {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatalf("stream %s: %v", name, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []StreamMsg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("message %d: %v", seq, err)
		}
		out = append(out, StreamMsg{Subject: m.Subject, MsgID: m.Header.Get(jetstream.MsgIDHeader), Data: m.Data})
	}
	return out
}

// StreamCount is the stream's message count, 0 while it is not there (or
// NATS does not answer).
func StreamCount(url, name string) uint64 {
	nc, err := nats.Connect(url, nats.Timeout(time.Second))
	if err != nil {
		return 0
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, name)
	if err != nil {
		return 0
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0
	}
	return info.State.Msgs
}
