package eventtest_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/windforce/windforce/events/relay"
	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/internal/eventtest"
)

// TestVerifyWebhook: the independent check accepts what the relay signs
// (the two implementations of the spec agree) and refuses a tampered
// body, another id, another secret, a stale timestamp and a signature of
// another version, so the tests that lean on it can fail.
func TestVerifyWebhook(t *testing.T) {
	secret, err := sink.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	other, err := sink.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	key, err := sink.SecretKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"specversion":"1.0","id":"e1"}`)
	signed := func(id string, ts time.Time, sig string) http.Header {
		h := http.Header{}
		h.Set("webhook-id", id)
		h.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
		h.Set("webhook-signature", sig)
		return h
	}
	now := time.Now()
	good := relay.Sign(key, "e1", now.Unix(), body)
	if err := eventtest.VerifyWebhook(secret, signed("e1", now, good), body); err != nil {
		t.Fatalf("the relay's signature refused: %v", err)
	}
	if err := eventtest.VerifyWebhook(secret, signed("e1", now, "v1,bm9wZQ== "+good), body); err != nil {
		t.Fatalf("a list holding the right signature refused: %v", err)
	}
	old := now.Add(-6 * time.Minute)
	for name, c := range map[string]struct {
		secret string
		h      http.Header
		body   string
	}{
		"tampered body":  {secret, signed("e1", now, good), `{"specversion":"1.0","id":"e2"}`},
		"another id":     {secret, signed("e2", now, good), string(body)},
		"another secret": {other, signed("e1", now, good), string(body)},
		"stale":          {secret, signed("e1", old, relay.Sign(key, "e1", old.Unix(), body)), string(body)},
		"v2 prefix":      {secret, signed("e1", now, "v2"+good[2:]), string(body)},
		"no id":          {secret, signed("", now, good), string(body)},
	} {
		if err := eventtest.VerifyWebhook(c.secret, c.h, []byte(c.body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
