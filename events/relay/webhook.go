package relay

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/events/sink"
)

// The Standard Webhooks headers (https://www.standardwebhooks.com).
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
	// ContentType is the CloudEvents structured mode's media type.
	ContentType = "application/cloudevents+json"
)

// maxErrorBody bounds what a refused delivery keeps of the answer.
const maxErrorBody = 256

// webhook POSTs each event to one URL, signed with the sink's key.
type webhook struct {
	url    string
	key    []byte
	client *http.Client
}

func newWebhook(sk sink.Sink, timeout time.Duration) (*webhook, error) {
	key, err := sink.SecretKey(sk.Secret)
	if err != nil {
		return nil, fmt.Errorf("event sink %s: %w", sk.ID, err)
	}
	// A transport of its own: this receiver's slow or dead connections
	// never hold another sink's.
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
	}
	return &webhook{url: sk.URL, key: key, client: &http.Client{Transport: tr, Timeout: timeout,
		// A redirect is not an acceptance: the receiver answers 2xx itself.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}, nil
}

// Sign is the Standard Webhooks signature of body for message id at ts:
// "v1," and the base64 of HMAC-SHA256(key, id + "." + ts + "." + body).
func Sign(key []byte, id string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(ts, 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// send POSTs the CloudEvent; a 2xx is accepted, anything else (another
// status, a timeout, a refused connection) is an error to retry.
func (h *webhook) send(ctx context.Context, ev events.Event) error {
	body, err := ev.Encode()
	if err != nil {
		return fmt.Errorf("encode event %s: %w", ev.ID, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	id, ts := ev.ID.String(), time.Now().Unix()
	req.Header.Set("Content-Type", ContentType)
	req.Header.Set("User-Agent", "windforce-relay")
	req.Header.Set(HeaderID, id)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, Sign(h.key, id, ts, body))
	res, err := h.client.Do(req)
	if err != nil {
		return fmt.Errorf("POST: %w", redactURL(err, h.url))
	}
	defer res.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20)) // reuse the connection
	if res.StatusCode < 200 || res.StatusCode > 299 {
		msg := strings.TrimSpace(strings.ToValidUTF8(string(head), "?"))
		return fmt.Errorf("receiver answered %s: %s", res.Status, msg)
	}
	return nil
}

func (h *webhook) close() { h.client.CloseIdleConnections() }

// redactURL drops the URL (and whatever credentials its query holds)
// from a client error, which a delivery keeps as its last error.
func redactURL(err error, raw string) error {
	return fmt.Errorf("%s", strings.ReplaceAll(err.Error(), raw, "<sink url>"))
}
