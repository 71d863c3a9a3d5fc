// Package wftoken mints and verifies WF_TOKEN, the credential a running job
// uses to reach the windforce API (DESIGN §3).
//
// A token is minted by the worker at claim, never stored, and bound to one
// claim of one job:
//
//	wf1.<base64url(JSON claims)>.<base64url(HMAC-SHA256(secret, "wf1."+claims))>
//
// The claims name the job, its workspace, the claim token and the expiry
// (claim + timeout + kill grace). A token of an earlier claim of the same
// job carries another claim token, so the server can refuse it once the job
// moved on. Verify checks the signature and the expiry; the server still
// checks that the claim is the job's current one.
package wftoken

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// prefix versions the token format.
const prefix = "wf1."

// ErrInvalid is matched by every refused token (bad form, bad signature,
// expired).
var ErrInvalid = errors.New("invalid WF_TOKEN")

// Claims is what a token says about its bearer.
type Claims struct {
	JobID      uuid.UUID `json:"job"`
	Workspace  string    `json:"ws"`
	ClaimToken uuid.UUID `json:"claim"`
	// Expiry is the end of the token's life (Unix seconds on the wire).
	Expiry time.Time `json:"-"`
}

type wireClaims struct {
	Claims
	Exp int64 `json:"exp"`
}

// Mint signs c with secret. The secret must not be empty.
func Mint(secret []byte, c Claims) (string, error) {
	if len(secret) == 0 {
		return "", fmt.Errorf("mint WF_TOKEN: %w: empty secret", ErrInvalid)
	}
	body, err := json.Marshal(wireClaims{Claims: c, Exp: c.Expiry.Unix()})
	if err != nil {
		return "", fmt.Errorf("mint WF_TOKEN: %w", err)
	}
	payload := prefix + base64.RawURLEncoding.EncodeToString(body)
	return payload + "." + base64.RawURLEncoding.EncodeToString(sign(secret, payload)), nil
}

// Verify checks token's signature with secret and that it has not expired
// at now, and returns its claims.
func Verify(secret []byte, token string, now time.Time) (Claims, error) {
	if len(secret) == 0 || !strings.HasPrefix(token, prefix) {
		return Claims{}, fmt.Errorf("%w: not a windforce job token", ErrInvalid)
	}
	dot := strings.LastIndexByte(token, '.')
	if dot <= len(prefix) {
		return Claims{}, fmt.Errorf("%w: malformed", ErrInvalid)
	}
	payload, sig := token[:dot], token[dot+1:]
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, sign(secret, payload)) {
		return Claims{}, fmt.Errorf("%w: bad signature", ErrInvalid)
	}
	body, err := base64.RawURLEncoding.DecodeString(payload[len(prefix):])
	if err != nil {
		return Claims{}, fmt.Errorf("%w: malformed claims: %w", ErrInvalid, err)
	}
	var w wireClaims
	if err := json.Unmarshal(body, &w); err != nil {
		return Claims{}, fmt.Errorf("%w: malformed claims: %w", ErrInvalid, err)
	}
	w.Claims.Expiry = time.Unix(w.Exp, 0)
	if !now.Before(w.Claims.Expiry) {
		return Claims{}, fmt.Errorf("%w: expired at %s", ErrInvalid, w.Claims.Expiry.UTC().Format(time.RFC3339))
	}
	return w.Claims, nil
}

func sign(secret []byte, payload string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(payload))
	return m.Sum(nil)
}
