package sink

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// SecretPrefix starts every webhook secret (the Standard Webhooks form).
const SecretPrefix = "whsec_"

// The key length a webhook secret carries after its prefix, decoded.
const (
	MinSecretBytes = 24
	MaxSecretBytes = 64
	// genSecretBytes is the length of a generated key.
	genSecretBytes = 32
)

// EventTypes are the event types a sink may name (DESIGN §9).
var EventTypes = []string{
	"job.queued", "job.started", "job.retrying", "job.succeeded",
	"job.failed", "job.canceled", "source.synced", "source.sync_failed",
}

// ErrInvalid is the error every refused sink matches (errors.Is); the
// API answers it 422 with its message.
var ErrInvalid = errors.New("invalid event sink")

// invalid is an ErrInvalid saying why.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

var (
	// idPattern: a short name usable in a URL path and a CLI argument.
	idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
	// subjectPattern: NATS subject tokens (no wildcards, no spaces).
	subjectPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)
)

// Prepare checks a sink to create and fills its defaults: a generated id
// when none is given, the default subject, a generated secret for a
// webhook that brings none. It reports whether the secret was generated
// (the create answers it, once). The error matches ErrInvalid.
func Prepare(s *Sink) (generated bool, err error) {
	if s.ID == "" {
		id, err := randomID(s.Kind)
		if err != nil {
			return false, err
		}
		s.ID = id
	}
	if s.Subject == "" {
		s.Subject = DefaultSubject
	}
	if s.Kind == KindWebhook && s.Secret == "" {
		if s.Secret, err = NewSecret(); err != nil {
			return false, err
		}
		generated = true
	}
	if s.Types == nil {
		s.Types = []string{}
	}
	return generated, Check(*s)
}

// Check reports the first reason s is not a valid sink (ErrInvalid).
func Check(s Sink) error {
	if !idPattern.MatchString(s.ID) {
		return invalid("id %q: 1-64 letters, digits, '_', '-' or '.', starting with a letter or digit", s.ID)
	}
	if err := checkURL(s.Kind, s.URL); err != nil {
		return err
	}
	if len(s.Subject) > 128 || !subjectPattern.MatchString(s.Subject) {
		return invalid("subject %q: NATS subject tokens (letters, digits, '_', '-') separated by '.', no wildcards, at most 128 characters", s.Subject)
	}
	if err := checkTypes(s.Types); err != nil {
		return err
	}
	switch s.Kind {
	case KindWebhook:
		if _, err := SecretKey(s.Secret); err != nil {
			return err
		}
	case KindNATS:
		if s.Secret != "" {
			return invalid("a nats sink takes no secret (it is for signing webhooks)")
		}
	}
	return nil
}

// Apply changes s by p and checks the result (ErrInvalid).
func Apply(s *Sink, p Patch) error {
	if p.URL != nil {
		s.URL = *p.URL
	}
	if p.Subject != nil {
		s.Subject = *p.Subject
	}
	if p.Types != nil {
		s.Types = *p.Types
		if s.Types == nil {
			s.Types = []string{}
		}
	}
	if p.Enabled != nil {
		s.Enabled = *p.Enabled
	}
	if p.Secret != nil {
		s.Secret = *p.Secret
		if s.Kind == KindWebhook && s.Secret == "" {
			return invalid("a webhook sink needs a secret (whsec_…)")
		}
	}
	return Check(*s)
}

func checkURL(kind Kind, raw string) error {
	var schemes []string
	switch kind {
	case KindNATS:
		schemes = []string{"nats"}
	case KindWebhook:
		schemes = []string{"http", "https"}
	default:
		return invalid("kind %q: nats or webhook", kind)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || !slices.Contains(schemes, u.Scheme) || len(raw) > 2048 {
		return invalid("url %q: a %s sink needs a %s:// URL with a host", raw, kind, strings.Join(schemes, ":// or "))
	}
	return nil
}

func checkTypes(types []string) error {
	seen := map[string]bool{}
	for _, t := range types {
		if !slices.Contains(EventTypes, t) {
			return invalid("type %q: one of %s", t, strings.Join(EventTypes, ", "))
		}
		if seen[t] {
			return invalid("type %q is listed twice", t)
		}
		seen[t] = true
	}
	return nil
}

// SecretKey is the HMAC key of a webhook secret: the base64 after
// "whsec_", 24 to 64 bytes decoded (ErrInvalid otherwise).
func SecretKey(secret string) ([]byte, error) {
	b64, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, invalid("secret: whsec_ followed by the base64 of %d-%d random bytes", MinSecretBytes, MaxSecretBytes)
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(key) < MinSecretBytes || len(key) > MaxSecretBytes {
		return nil, invalid("secret: whsec_ followed by the base64 of %d-%d random bytes", MinSecretBytes, MaxSecretBytes)
	}
	return key, nil
}

// NewSecret generates a webhook secret.
func NewSecret() (string, error) {
	key := make([]byte, genSecretBytes)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("generate webhook secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// randomID names a sink created without an id: its kind and 8 hex digits.
func randomID(kind Kind) (string, error) {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate sink id: %w", err)
	}
	prefix := string(kind)
	if !idPattern.MatchString(prefix) {
		prefix = "sink"
	}
	return fmt.Sprintf("%s-%x", prefix, b), nil
}
