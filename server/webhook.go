package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// Webhook signing (DESIGN §4). A sender without a token signs
// timestamp + "." + raw body with HMAC-SHA256 keyed by the action's
// webhook secret (the whole "whsec_…" text) and sends the hex digest,
// optionally prefixed "sha256=", with the unix-seconds timestamp.
const (
	WebhookSignatureHeader = "X-Windforce-Signature"
	WebhookTimestampHeader = "X-Windforce-Timestamp"
	// WebhookWindow is how far a signed timestamp may be from the server's
	// clock, either way.
	WebhookWindow = 5 * time.Minute
	// webhookSecretPrefix marks webhook secrets for secret scanners.
	webhookSecretPrefix = "whsec_"
	// webhookHMACRef is the trigger_ref of a job a signed webhook made.
	webhookHMACRef = "hmac"
)

// WebhookStore keeps webhook secrets and the signatures already used.
// The store core (package store) implements it.
type WebhookStore interface {
	// PutWebhookSecret creates or rotates the secret of an action;
	// catalog.ErrNotFound when the catalog has no such action.
	PutWebhookSecret(ctx context.Context, workspace, app, action, secret string, now time.Time) error
	// WebhookSecret returns an action's secret; ok is false when none was
	// created.
	WebhookSecret(ctx context.Context, workspace, app, action string) (secret string, ok bool, err error)
	// EnqueueWebhook records signature as seen at now and enqueues r
	// through the one enqueue path, in one transaction, after deleting
	// signatures seen before forgetBefore. A signature already recorded
	// is spine.ErrConflict; a refused enqueue records nothing, so a
	// corrected retry (new timestamp, new signature) is unaffected.
	EnqueueWebhook(ctx context.Context, signature string, now, forgetBefore time.Time, r catalog.EnqueueRequest) (spine.EnqueueResult, error)
}

// serveWebhook is POST /api/w/{ws}/webhooks/{app}/{action}: with a bearer
// token (webhook, run or admin scope) the token is the proof; without one
// the request must carry a valid, fresh, never-used HMAC signature. A
// replayed signature is 409 conflict: the request was authentic once, so
// the sender learns it is a duplicate rather than a bad credential.
func (s *Server) serveWebhook(w http.ResponseWriter, r *http.Request) {
	var v any
	var err error
	if r.Header.Get("Authorization") != "" {
		v, err = s.webhookWithToken(w, r)
	} else {
		v, err = s.webhookWithSignature(w, r)
	}
	s.respond(w, r, v, err)
}

// webhookRoute is what a token needs on the webhook route.
var webhookRoute = route{action: auth.ActionWebhook, job: jobNone}

// webhookWithToken enqueues for a token allowed the webhook scope in the
// path's workspace; trigger_ref is the token id. Job tokens are refused.
func (s *Server) webhookWithToken(w http.ResponseWriter, r *http.Request) (any, error) {
	c, err := s.authenticate(r)
	if err != nil {
		return nil, err
	}
	if err := s.authorize(r, c, webhookRoute); err != nil {
		return nil, err
	}
	body, err := inputBody(w, r, s.cfg.MaxInputBytes)
	if err != nil {
		return nil, err
	}
	req := webhookRequest(r, body, c.token.ID, c.name())
	res, err := s.enq.Enqueue(r.Context(), req)
	if err != nil {
		return nil, err
	}
	return webhookEnqueued(res), nil
}

// webhookWithSignature checks, in order, the signature, the timestamp's
// window and the body, then records the signature and enqueues in one
// transaction. Every refusal before the enqueue is 401 and writes nothing.
func (s *Server) webhookWithSignature(w http.ResponseWriter, r *http.Request) (any, error) {
	sigText, tsText := r.Header.Get(WebhookSignatureHeader), r.Header.Get(WebhookTimestampHeader)
	if sigText == "" || tsText == "" {
		return nil, errorf(http.StatusUnauthorized, CodeUnauthorized,
			"missing bearer token, or %s and %s", WebhookSignatureHeader, WebhookTimestampHeader)
	}
	raw, err := readBody(w, r, s.cfg.MaxInputBytes)
	if err != nil {
		return nil, err
	}
	ws, app, action := r.PathValue("ws"), r.PathValue("app"), r.PathValue("action")
	secret, ok, err := s.cfg.Store.WebhookSecret(r.Context(), ws, app, action)
	if err != nil {
		return nil, err
	}
	if !ok {
		// The same answer as a wrong signature: an anonymous caller learns
		// nothing about which actions take signed webhooks.
		return nil, errBadSignature
	}
	sig, err := verifySignature(secret, tsText, sigText, raw)
	if err != nil {
		return nil, err
	}
	now := s.now()
	if err := checkTimestamp(tsText, now); err != nil {
		return nil, err
	}
	body, err := normalizeBody(raw)
	if err != nil {
		return nil, err
	}
	req := webhookRequest(r, body, webhookHMACRef, "webhook")
	// A signature stays acceptable while now is within the window of its
	// timestamp either way, so it may be seen as early as ts-window and
	// replayed as late as ts+window: its record must outlive seen_at by
	// two windows, not one.
	res, err := s.enq.Via(r.Context(), req, func(ctx context.Context, req catalog.EnqueueRequest) (spine.EnqueueResult, error) {
		return s.cfg.Store.EnqueueWebhook(ctx, sig, now, now.Add(-2*WebhookWindow), req)
	})
	if err != nil {
		return nil, err
	}
	return webhookEnqueued(res), nil
}

// errBadSignature answers a signature that does not match, or an action
// without a webhook secret (a secret is created with POST …/secret).
var errBadSignature = errorf(http.StatusUnauthorized, CodeUnauthorized,
	"webhook signature does not match: want hex HMAC-SHA256 of timestamp + \".\" + body, keyed by the action's webhook secret, in "+WebhookSignatureHeader)

// verifySignature compares the sent signature with the HMAC of
// timestamp + "." + body in constant time. It returns the expected digest
// in lowercase hex: the replay key, the same however the sender spelled it.
func verifySignature(secret, ts, sent string, body []byte) (string, error) {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write(body)
	want := mac.Sum(nil)
	got, err := hex.DecodeString(strings.TrimPrefix(strings.TrimSpace(sent), "sha256="))
	if err != nil || !hmac.Equal(got, want) {
		return "", errBadSignature
	}
	return hex.EncodeToString(want), nil
}

// checkTimestamp refuses a timestamp outside WebhookWindow of now, so a
// captured request is useless once its replay record may be forgotten.
func checkTimestamp(ts string, now time.Time) error {
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errorf(http.StatusUnauthorized, CodeUnauthorized, "%s=%q: want unix seconds", WebhookTimestampHeader, ts)
	}
	skew := now.Sub(time.Unix(sec, 0))
	if skew > WebhookWindow || skew < -WebhookWindow {
		return errorf(http.StatusUnauthorized, CodeUnauthorized,
			"%s is %s away from the server's clock; the window is %s", WebhookTimestampHeader, skew.Round(time.Second), WebhookWindow)
	}
	return nil
}

// webhookRequest is the enqueue of the path's action with trigger webhook.
func webhookRequest(r *http.Request, body []byte, ref, by string) catalog.EnqueueRequest {
	return catalog.EnqueueRequest{
		Workspace: r.PathValue("ws"), App: r.PathValue("app"), Action: r.PathValue("action"),
		TriggerKind: spine.TriggerWebhook, TriggerRef: ref, CreatedBy: by, Input: body,
	}
}

// webhookEnqueued answers 201 {"id"}.
func webhookEnqueued(res spine.EnqueueResult) *reply {
	return &reply{status: http.StatusCreated, body: map[string]any{"id": res.ID.String()}}
}

// putWebhookSecret is POST …/webhooks/{app}/{action}/secret (admin): it
// creates or rotates the action's secret and answers {"secret"} once; the
// old secret stops working at once. 404 for an unknown app or action.
func (s *Server) putWebhookSecret(_ http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("new webhook secret: %w", err)
	}
	secret := webhookSecretPrefix + hex.EncodeToString(b[:])
	err := s.cfg.Store.PutWebhookSecret(r.Context(), r.PathValue("ws"), r.PathValue("app"), r.PathValue("action"), secret, s.now())
	if err != nil {
		return nil, err
	}
	return &reply{status: http.StatusCreated, body: map[string]any{"secret": secret}}, nil
}
