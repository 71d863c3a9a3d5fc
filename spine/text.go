package spine

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// CheckText refuses valid JSON holding text that only one of the
// databases could store: the NUL character (raw or escaped as \u0000) and
// a lone UTF-16 surrogate escape (\ud800 without its low half, or a low
// half alone). Postgres's jsonb refuses both; SQLite would keep them, so
// the same request would be a 201 on one database and a 400 on the other.
// what names the value in the error ("input", "result").
func CheckText(what string, v json.RawMessage) error {
	switch scanEscapes(v) {
	case badNUL:
		return fmt.Errorf("%w: %s contains a NUL character (\\u0000), which windforce refuses", ErrInvalid, what)
	case badSurrogate:
		return fmt.Errorf("%w: %s contains a lone UTF-16 surrogate escape (such as \\ud800 without its pair), which is not Unicode text", ErrInvalid, what)
	}
	return nil
}

// HasNUL reports whether valid JSON holds NUL in a string or key (raw, or
// escaped as \u0000), which Postgres's jsonb refuses. It is exact: the text
// `\\u0000` (an escaped backslash, then "u0000") is no NUL.
func HasNUL(v json.RawMessage) bool { return scanEscapes(v) == badNUL }

// badText is what scanEscapes found first.
type badText int

const (
	textOK badText = iota
	badNUL
	badSurrogate
)

// scanEscapes walks valid JSON once. Outside strings a backslash cannot
// occur, so only escapes inside strings are read; \uXXXX escapes are
// decoded to find NUL and unpaired surrogates. Most values have no
// backslash at all and are decided by one byte scan.
func scanEscapes(v []byte) badText {
	if bytes.IndexByte(v, 0) >= 0 {
		return badNUL
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return textOK
	}
	pendingHigh := false // the previous escape was a high surrogate
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' {
			if pendingHigh {
				return badSurrogate
			}
			continue
		}
		i++
		if i >= len(v) || v[i] != 'u' {
			if pendingHigh {
				return badSurrogate
			}
			continue // \n, \", \\ …: the escaped character is skipped
		}
		r, ok := hex4(v[i+1:])
		if !ok {
			return textOK // not valid JSON; json.Valid has refused it already
		}
		i += 4
		switch {
		case r == 0:
			return badNUL
		case r >= 0xD800 && r <= 0xDBFF:
			if pendingHigh {
				return badSurrogate
			}
			pendingHigh = true
		case r >= 0xDC00 && r <= 0xDFFF:
			if !pendingHigh {
				return badSurrogate
			}
			pendingHigh = false
		default:
			if pendingHigh {
				return badSurrogate
			}
		}
	}
	if pendingHigh {
		return badSurrogate
	}
	return textOK
}

// hex4 reads four hex digits.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
