// Package eventtest checks what the event relay sends with code of its
// own, for the relay's tests and the end-to-end tests of the binary: the
// Standard Webhooks signature as the spec describes it (not the relay's
// Sign), and a JetStream stream's messages read back one by one.
package eventtest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// VerifyWebhook checks a Standard Webhooks request as the spec describes
// it: the key is the base64 after "whsec_"; the signed content is
// "{webhook-id}.{webhook-timestamp}.{body}"; webhook-signature is a
// space-separated list of "v1,{base64 HMAC-SHA256}" of which one must
// match; the timestamp must be within 5 minutes of now.
func VerifyWebhook(secret string, h http.Header, body []byte) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return fmt.Errorf("secret: %v", err)
	}
	id, ts := h.Get("webhook-id"), h.Get("webhook-timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if id == "" || err != nil {
		return fmt.Errorf("missing webhook-id %q or bad webhook-timestamp %q", id, ts)
	}
	if d := time.Since(time.Unix(sec, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return fmt.Errorf("timestamp %s is %s off", ts, d)
	}
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s.%s.", id, ts)
	m.Write(body)
	want := m.Sum(nil)
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		version, b64, ok := strings.Cut(sig, ",")
		got, err := base64.StdEncoding.DecodeString(b64)
		if ok && version == "v1" && err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("no signature in %q matches", h.Get("webhook-signature"))
}
