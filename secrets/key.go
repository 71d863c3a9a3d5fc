package secrets

import (
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the length of a key in bytes (AES-256).
const KeySize = 32

// deriveInfo is the HKDF info string of the key derived from
// WINDFORCE_SECRET; a new derivation would change the "v1".
const deriveInfo = "windforce secrets v1"

// idInfo is the HKDF info string of a key's fingerprint, distinct from
// every use of the key itself.
const idInfo = "windforce secrets key id v1"

// ErrNoKey means neither WINDFORCE_SECRETS_KEY nor WINDFORCE_SECRET is set,
// so no secret can be sealed or opened.
var ErrNoKey = errors.New("no secrets key: set WINDFORCE_SECRETS_KEY (32 bytes, base64 or hex) or WINDFORCE_SECRET")

// ErrBadKey means a key given as text is not 32 bytes in base64 or hex.
var ErrBadKey = errors.New("a secrets key must be 32 bytes written as base64 (44 characters) or hex (64 characters)")

// Key is the AES-256 key that seals and opens secret values. Its bytes
// are unexported and it prints as its fingerprint only, so a Key that ends
// up in a log line or an error message gives nothing away.
type Key struct {
	b  [KeySize]byte
	id string
}

// KeyFromConfig is the key the configuration names: secretsKey
// (WINDFORCE_SECRETS_KEY) when set, parsed by ParseKey; else the key
// derived from windforceSecret (WINDFORCE_SECRET) by DeriveKey; ErrNoKey
// when both are empty.
func KeyFromConfig(secretsKey string, windforceSecret []byte) (Key, error) {
	if strings.TrimSpace(secretsKey) != "" {
		k, err := ParseKey(secretsKey)
		if err != nil {
			return Key{}, fmt.Errorf("WINDFORCE_SECRETS_KEY: %w", err)
		}
		return k, nil
	}
	if len(windforceSecret) == 0 {
		return Key{}, ErrNoKey
	}
	return DeriveKey(windforceSecret)
}

// ParseKey reads a key written as 64 hex digits or as base64 (standard or
// URL alphabet, padded or not) of 32 bytes; anything else is ErrBadKey.
// The error never repeats the text, which may be a real key mistyped.
func ParseKey(s string) (Key, error) {
	s = strings.TrimSpace(s)
	if len(s) == hex.EncodedLen(KeySize) {
		if b, err := hex.DecodeString(s); err == nil {
			return newKey(b), nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == KeySize {
			return newKey(b), nil
		}
	}
	return Key{}, ErrBadKey
}

// DeriveKey derives the key from the server secret (WINDFORCE_SECRET)
// with HKDF-SHA256 and a fixed info string, so the signing secret itself
// never encrypts anything and every process given the same secret derives
// the same key.
func DeriveKey(secret []byte) (Key, error) {
	if len(secret) == 0 {
		return Key{}, ErrNoKey
	}
	b, err := hkdf.Key(sha256.New, secret, nil, deriveInfo, KeySize)
	if err != nil {
		return Key{}, fmt.Errorf("derive secrets key: %w", err)
	}
	return newKey(b), nil
}

// newKey copies b (KeySize bytes) into a Key and computes its ID once.
func newKey(b []byte) Key {
	var k Key
	copy(k.b[:], b)
	fp, err := hkdf.Expand(sha256.New, k.b[:], idInfo, 8)
	if err != nil {
		// Expand fails only for a length over 255 hash sizes.
		panic("secrets: key fingerprint: " + err.Error())
	}
	k.id = hex.EncodeToString(fp)
	return k
}

// ID is the key's fingerprint: 16 hex digits from HKDF over the key with
// its own info string, so it reveals nothing of the key. Each stored row
// carries the ID of the key that sealed it, so rotate-key knows which rows
// an old key sealed and an error can say "sealed with another key".
// The zero Key's ID is "".
func (k Key) ID() string { return k.id }

// IsZero reports whether k is the zero Key (no key configured).
func (k Key) IsZero() bool { return k.id == "" }

// String prints the fingerprint only, never the key.
func (k Key) String() string {
	if k.IsZero() {
		return "secrets.Key(none)"
	}
	return "secrets.Key(" + k.id + ")"
}

// GoString is String, so %#v does not print the key's bytes either.
func (k Key) GoString() string { return k.String() }
