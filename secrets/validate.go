package secrets

import (
	"bytes"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/windforce/windforce/spine"
)

// MaxValueBytes is the largest secret value (DESIGN §8).
const MaxValueBytes = 64 << 10

// MaxDescriptionChars is the longest description, in characters.
const MaxDescriptionChars = 1000

// The typed errors of a bad secret; the API maps them to its statuses
// (422 for a bad name, an empty value or a bad description, 413 for a
// value over MaxValueBytes, 400 for a value that is not text). None of
// them repeats a value.
var (
	// ErrInvalidName: the name does not match ^[A-Za-z_][A-Za-z0-9_]{0,63}$.
	ErrInvalidName = errors.New("invalid secret name")
	// ErrEmptyValue: the value is empty.
	ErrEmptyValue = errors.New("secret value is empty")
	// ErrValueTooLarge: the value is over MaxValueBytes.
	ErrValueTooLarge = fmt.Errorf("secret value is over %d bytes", MaxValueBytes)
	// ErrValueNotText: the value holds a NUL byte or is not valid UTF-8
	// (it becomes an environment variable, which can hold neither).
	ErrValueNotText = errors.New("secret value must be UTF-8 text without NUL bytes")
	// ErrInvalidDescription: the description is too long or holds
	// control characters other than newline and tab, or invalid UTF-8.
	ErrInvalidDescription = errors.New("invalid secret description")
)

// ValidName checks a secret name: a letter or underscore, then up to 63
// letters, digits or underscores, so that it is also a valid environment
// variable name (the rule is spine.ValidSecretName's, which manifests'
// secret references follow too); ErrInvalidName otherwise.
func ValidName(name string) error {
	if spine.ValidSecretName(name) {
		return nil
	}
	shown := name
	if len(shown) > 80 || !utf8.ValidString(shown) {
		shown = "(not shown)"
	}
	return fmt.Errorf("%w %q: use a letter or _ then up to 63 letters, digits or _", ErrInvalidName, shown)
}

// ValidValue checks a secret value: not empty, at most MaxValueBytes,
// UTF-8 without NUL. Which error it answers is a typed one above.
func ValidValue(v []byte) error {
	switch {
	case len(v) == 0:
		return ErrEmptyValue
	case len(v) > MaxValueBytes:
		return ErrValueTooLarge
	case bytes.IndexByte(v, 0) >= 0, !utf8.Valid(v):
		return ErrValueNotText
	}
	return nil
}

// ValidDescription checks a description: optional, at most
// MaxDescriptionChars characters of UTF-8 text, with no control
// characters but newline and tab.
func ValidDescription(d string) error {
	if !utf8.ValidString(d) {
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidDescription)
	}
	if n := utf8.RuneCountInString(d); n > MaxDescriptionChars {
		return fmt.Errorf("%w: %d characters, at most %d", ErrInvalidDescription, n, MaxDescriptionChars)
	}
	for _, r := range d {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return fmt.Errorf("%w: control character %U", ErrInvalidDescription, r)
		}
	}
	return nil
}
