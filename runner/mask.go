package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// tokenMasker replaces one job's WF_TOKEN in everything the runner hands
// back to be stored from that job: its result, its error (message and
// stack, hence also the last_error of a retried attempt) and any other
// error text. The logs mask it themselves (logSink), as they stream.
type tokenMasker string

// text masks a plain string.
func (m tokenMasker) text(s string) string {
	if m == "" {
		return s
	}
	return strings.ReplaceAll(s, string(m), tokenMask)
}

// result masks the token inside every string (keys too) of a JSON value
// and keeps it valid JSON. The token's alphabet (wf1., base64url, dots)
// needs no escaping, but a JSON encoder may still escape any character
// (\/, \u0077), so a string literal with a backslash is decoded before it
// is searched and re-encoded only when it held the token; every other
// byte of the value is kept as it was.
func (m tokenMasker) result(v json.RawMessage) json.RawMessage {
	if m == "" || len(v) == 0 {
		return v
	}
	if bytes.IndexByte(v, '\\') < 0 {
		if !bytes.Contains(v, []byte(m)) {
			return v
		}
		return bytes.ReplaceAll(v, []byte(m), []byte(tokenMask))
	}
	out := make([]byte, 0, len(v))
	for i := 0; i < len(v); {
		if v[i] != '"' {
			out = append(out, v[i])
			i++
			continue
		}
		end := stringEnd(v, i)
		out = append(out, m.literal(v[i:end])...)
		i = end
	}
	return out
}

// stringEnd is the index just past the JSON string literal that opens at
// v[start] (a quote); len(v) when it is not closed.
func stringEnd(v []byte, start int) int {
	for i := start + 1; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++ // the escaped byte cannot close the string
		case '"':
			return i + 1
		}
	}
	return len(v)
}

// literal masks one JSON string literal, quotes included.
func (m tokenMasker) literal(lit []byte) []byte {
	if bytes.IndexByte(lit, '\\') < 0 {
		return bytes.ReplaceAll(lit, []byte(m), []byte(tokenMask))
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		// Not a literal (the value was not valid JSON): mask what shows.
		return bytes.ReplaceAll(lit, []byte(m), []byte(tokenMask))
	}
	if !strings.Contains(s, string(m)) {
		return lit
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(m.text(s)) != nil {
		return bytes.ReplaceAll(lit, []byte(m), []byte(tokenMask))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// err masks a handler error. A *Failure is the stored error itself
// (spine.JobFailure): its message and stack are masked in place. Any
// other error is stored by its text, so one that shows the token is
// wrapped in a maskedError, which keeps errors.Is and errors.As working.
func (m tokenMasker) err(err error) error {
	if m == "" || err == nil {
		return err
	}
	var f *Failure
	if errors.As(err, &f) {
		f.Message, f.Stack = m.text(f.Message), m.text(f.Stack)
	}
	if !strings.Contains(err.Error(), string(m)) {
		return err
	}
	return &maskedError{err: err, msg: m.text(err.Error())}
}

// maskedError is an error whose text had the job's token masked.
type maskedError struct {
	err error
	msg string
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }
