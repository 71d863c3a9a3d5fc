package runner

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
)

// tokenMask replaces WF_TOKEN in everything stored from a job.
const tokenMask = "[WF_TOKEN]"

// secretMask is what replaces a secret's value (in any of its forms).
func secretMask(name string) string { return "[secret:" + name + "]" }

// maskedSecret is one secret value a job received, by name.
type maskedSecret struct {
	Name, Value string
}

// masker replaces, in everything the runner hands back to be stored from
// one job, every value the job received that must not be stored: its
// WF_TOKEN and each secret value of its environment, the latter also in
// the forms a script is likely to print it in (base64 std, URL, unpadded;
// URL query and path escaping; see secretForms). It covers the job's logs
// (logSink, as they stream, across chunk boundaries), its result (inside
// JSON strings, however escaped), its error (message and stack, hence the
// last_error of a retried attempt) and any other error text. A nil masker
// masks nothing.
type masker struct {
	// needles are the texts to replace, longest first: at one position
	// the longest wins, so the padded base64 of a value is masked whole
	// rather than leaving its "=" behind its unpadded form's mask.
	needles []needle
	// longest is the length of the longest needle.
	longest int
}

// needle is one text to mask and its replacement.
type needle struct {
	text, mask string
	// fail is the KMP failure function of text: fail[i] is the length of
	// the longest proper prefix of text[:i+1] that is also its suffix. It
	// finds the tail of a log buffer that may begin text in linear time.
	fail []int
}

// newMasker builds the masker of one job: token (may be empty) and the
// secret values it received (empty values are skipped: nothing to hide).
func newMasker(token string, secrets []maskedSecret) *masker {
	m := &masker{}
	seen := map[string]bool{}
	add := func(text, mask string) {
		if text == "" || seen[text] {
			return
		}
		seen[text] = true
		m.needles = append(m.needles, needle{text: text, mask: mask, fail: kmpFail(text)})
		m.longest = max(m.longest, len(text))
	}
	add(token, tokenMask)
	for _, s := range secrets {
		for _, form := range secretForms(s.Value) {
			add(form, secretMask(s.Name))
		}
	}
	slices.SortStableFunc(m.needles, func(a, b needle) int { return len(b.text) - len(a.text) })
	return m
}

// secretForms are the texts a secret's value is masked in: as it is, its
// base64 (standard and URL alphabets, padded and not) and its URL
// escapings (query and path). Duplicates are removed by newMasker.
func secretForms(v string) []string {
	if v == "" {
		return nil
	}
	b := []byte(v)
	return []string{
		v,
		base64.StdEncoding.EncodeToString(b), base64.URLEncoding.EncodeToString(b),
		base64.RawStdEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b),
		url.QueryEscape(v), url.PathEscape(v),
	}
}

// kmpFail is the failure function of s (see needle.fail).
func kmpFail(s string) []int {
	f := make([]int, len(s))
	for i, k := 1, 0; i < len(s); i++ {
		for k > 0 && s[i] != s[k] {
			k = f[k-1]
		}
		if s[i] == s[k] {
			k++
		}
		f[i] = k
	}
	return f
}

// empty reports whether m masks nothing.
func (m *masker) empty() bool { return m == nil || len(m.needles) == 0 }

// match is one occurrence of a needle that masking replaces.
type match struct {
	start, end int
	mask       string
}

// matches are the occurrences masking replaces, in order: scanning left
// to right, the earliest occurrence of any needle, the longest one where
// several start at the same byte, then on from its end.
func (m *masker) matches(text string) []match {
	if m.empty() {
		return nil
	}
	// next[i] is where needle i next occurs at or after pos (-1: never).
	next := make([]int, len(m.needles))
	for i, n := range m.needles {
		next[i] = strings.Index(text, n.text)
	}
	var out []match
	for pos := 0; ; {
		best := -1
		for i := range next {
			if next[i] >= 0 && next[i] < pos {
				next[i] = indexFrom(text, m.needles[i].text, pos)
			}
			// Needles are longest first: on a tie the first found wins.
			if next[i] >= 0 && (best < 0 || next[i] < next[best]) {
				best = i
			}
		}
		if best < 0 {
			return out
		}
		s := next[best]
		out = append(out, match{start: s, end: s + len(m.needles[best].text), mask: m.needles[best].mask})
		pos = s + len(m.needles[best].text)
	}
}

// indexFrom is the index of sub in text at or after from, -1 when none.
func indexFrom(text, sub string, from int) int {
	if from > len(text) {
		return -1
	}
	i := strings.Index(text[from:], sub)
	if i < 0 {
		return -1
	}
	return from + i
}

// replace is text with ms (from matches(text)) replaced by their masks.
func replace(text string, ms []match) string {
	if len(ms) == 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	last := 0
	for _, mt := range ms {
		b.WriteString(text[last:mt.start])
		b.WriteString(mt.mask)
		last = mt.end
	}
	b.WriteString(text[last:])
	return b.String()
}

// text masks a plain string.
func (m *masker) text(s string) string {
	if m.empty() {
		return s
	}
	return replace(s, m.matches(s))
}

// found reports whether any needle occurs in s.
func (m *masker) found(s string) bool {
	if m.empty() {
		return false
	}
	for _, n := range m.needles {
		if strings.Contains(s, n.text) {
			return true
		}
	}
	return false
}

// pending is the length of the longest tail of text that is the start of
// a needle (not all of it), 0 when none is: what a stream must hold back
// until it knows whether the needle follows.
func (m *masker) pending(text string) int {
	if m.empty() {
		return 0
	}
	keep := 0
	for i := range m.needles {
		keep = max(keep, m.needles[i].tail(text))
	}
	return keep
}

// tail is the length of the longest tail of text that is a proper prefix
// of n.text: the KMP automaton run over the last len(n.text)-1 bytes.
func (n *needle) tail(text string) int {
	k := 0
	for i := max(0, len(text)-(len(n.text)-1)); i < len(text); i++ {
		for k > 0 && text[i] != n.text[k] {
			k = n.fail[k-1]
		}
		if text[i] == n.text[k] {
			k++
		}
		if k == len(n.text) {
			k = n.fail[k-1]
		}
	}
	return k
}

// cut splits a stream's buffered text at the last point up to which it
// can be masked for good: before any tail that may begin a needle, and
// never inside an occurrence (two needles may overlap, so a later cut
// could otherwise split the one masking picks). It returns the masked
// head and the raw rest, which is shorter than twice the longest needle:
// the hold-back stays bounded whatever the job writes.
func (m *masker) cut(text string, minKeep int) (head, rest string) {
	c := len(text) - max(minKeep, m.pending(text))
	ms := m.matches(text)
	done := len(ms)
	for i, mt := range ms {
		if mt.end > c {
			if mt.start < c {
				c = mt.start
			}
			done = i
			break
		}
	}
	return replace(text[:c], ms[:done]), text[c:]
}

// result masks every string (keys too) of a JSON value and keeps it valid
// JSON. A JSON encoder may escape any character (\/, \u0077), so a string
// literal with a backslash is decoded before it is searched and
// re-encoded only when it held a value; a number or literal that shows
// one becomes the string of its masked text. Should a value still show
// across tokens (a secret "1,2" in [1,2]), the whole result becomes the
// JSON string of its masked text: the stored result never shows a value.
// Every other byte is kept as it was.
func (m *masker) result(v json.RawMessage) json.RawMessage {
	if m.empty() || len(v) == 0 {
		return v
	}
	if bytes.IndexByte(v, '\\') < 0 && !m.found(string(v)) {
		return v
	}
	out := make([]byte, 0, len(v))
	for i := 0; i < len(v); {
		switch {
		case v[i] == '"':
			end := stringEnd(v, i)
			out = append(out, m.literal(v[i:end])...)
			i = end
		case isJSONStructural(v[i]):
			out = append(out, v[i])
			i++
		default:
			end := i
			for end < len(v) && !isJSONStructural(v[end]) && v[end] != '"' {
				end++
			}
			out = append(out, m.scalar(v[i:end])...)
			i = end
		}
	}
	if m.found(string(out)) {
		return jsonString(m.text(string(out)))
	}
	return out
}

// isJSONStructural reports whether c separates JSON tokens.
func isJSONStructural(c byte) bool {
	switch c {
	case '{', '}', '[', ']', ',', ':', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// scalar masks a number or literal token: one that shows a value becomes
// the string of its masked text.
func (m *masker) scalar(tok []byte) []byte {
	if !m.found(string(tok)) {
		return tok
	}
	return jsonString(m.text(string(tok)))
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
func (m *masker) literal(lit []byte) []byte {
	if bytes.IndexByte(lit, '\\') < 0 {
		return []byte(m.text(string(lit)))
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		// Not a literal (the value was not valid JSON): mask what shows.
		return []byte(m.text(string(lit)))
	}
	if !m.found(s) {
		return lit
	}
	return jsonString(m.text(s))
}

// jsonString encodes s as a JSON string literal, HTML characters as they
// are (the masks need no escaping).
func jsonString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// err masks a handler error. A *Failure is the stored error itself
// (spine.JobFailure): its message and stack are masked in place. Any
// other error is stored by its text, so one that shows a value is
// wrapped in a maskedError, which keeps errors.Is and errors.As working.
func (m *masker) err(err error) error {
	if m.empty() || err == nil {
		return err
	}
	var f *Failure
	if errors.As(err, &f) {
		f.Message, f.Stack = m.text(f.Message), m.text(f.Stack)
	}
	if !m.found(err.Error()) {
		return err
	}
	return &maskedError{err: err, msg: m.text(err.Error())}
}

// maskedError is an error whose text had the job's values masked.
type maskedError struct {
	err error
	msg string
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }

// longestNeedle is the length of the longest text m masks, 0 for none.
func (m *masker) longestNeedle() int {
	if m == nil {
		return 0
	}
	return m.longest
}

// cutHead is how many leading bytes to drop from text that begins where
// a stream was cut: as many as the longest needle less one (they may be
// the end of a value whose start was cut off), and, where that falls
// inside a whole occurrence, up to that occurrence's end (else its own
// end would be kept unmasked).
func (m *masker) cutHead(text string) int {
	d := min(m.longestNeedle()-1, len(text))
	if d <= 0 {
		return 0
	}
	for _, mt := range m.matches(text) {
		if mt.start >= d {
			break
		}
		if mt.end > d {
			return mt.end
		}
	}
	return d
}
