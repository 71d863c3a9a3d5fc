package spine

import (
	"encoding/json"
	"fmt"
	"strings"
)

// SafeText makes text from a job (its output, its error message) storable
// in both databases: Postgres text and jsonb refuse NUL and invalid UTF-8,
// so both become U+FFFD instead of failing the write and losing the rest.
func SafeText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// Encode returns the stored form of a job error, {"message","stack","kind"},
// with every field made safe to store.
func (e JobError) Encode() (string, error) {
	e = JobError{Message: SafeText(e.Message), Stack: SafeText(e.Stack), Kind: SafeText(e.Kind)}
	b, err := json.Marshal(e)
	if err != nil {
		return "", fmt.Errorf("encode job error: %w", err)
	}
	return string(b), nil
}

// DecodeJobError reads a stored job error; nil for NULL (nil or empty).
func DecodeJobError(v []byte) (*JobError, error) {
	if len(v) == 0 {
		return nil, nil
	}
	var e JobError
	if err := json.Unmarshal(v, &e); err != nil {
		return nil, fmt.Errorf("decode job error: %w", err)
	}
	return &e, nil
}
