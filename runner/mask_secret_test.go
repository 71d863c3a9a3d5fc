package runner

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/windforce/windforce/spine"
)

// testSecret has characters every encoding treats differently: '/' and
// '+' in base64, padding, '?', '&', '=', ' ', '%' and non-ASCII in URLs,
// quotes and backslashes in JSON.
var testSecret = maskedSecret{Name: "slack_token", Value: `xoxb-1/2+3?a=b&c d%é"\>`}

// TestSecretFormsAreMasked: the value and each of its encodings, in
// plain text, in a JSON result (escaped however an encoder may) and in an
// error, show [secret:NAME] and nothing of the value.
func TestSecretFormsAreMasked(t *testing.T) {
	t.Parallel()
	v := testSecret.Value
	forms := map[string]string{
		"plain": v, "base64 std": base64.StdEncoding.EncodeToString([]byte(v)),
		"base64 url": base64.URLEncoding.EncodeToString([]byte(v)), "base64 raw std": base64.RawStdEncoding.EncodeToString([]byte(v)),
		"base64 raw url": base64.RawURLEncoding.EncodeToString([]byte(v)),
		"query escape":   url.QueryEscape(v), "path escape": url.PathEscape(v),
	}
	m := newMasker(testToken, []maskedSecret{testSecret})
	const mask = "[secret:slack_token]"
	for name, form := range forms {
		if got, want := m.text("a "+form+" b"), "a "+mask+" b"; got != want {
			t.Errorf("%s: text = %q, want %q", name, got, want)
		}
		lit, _ := json.Marshal("<" + form + ">") // escapes the quote, backslash and <>
		key, _ := json.Marshal(form + "x")
		res := string(m.result(json.RawMessage(`{"k":` + string(lit) + `,` + string(key) + `:1}`)))
		if !json.Valid([]byte(res)) || strings.Count(res, mask) != 2 || strings.Contains(res, form) {
			t.Errorf("%s: result = %s", name, res)
		}
		err := m.err(fmt.Errorf("call failed with %s: %w", form, errBase))
		if strings.Contains(err.Error(), form) || !strings.Contains(err.Error(), mask) || !errors.Is(err, errBase) {
			t.Errorf("%s: err = %v", name, err)
		}
		f := &Failure{Message: form, Stack: "at " + form}
		_ = m.err(f)
		if f.Message != mask || f.Stack != "at "+mask {
			t.Errorf("%s: failure = %+v", name, f)
		}
	}
	// Escaped in a way that hides the raw text: \u escapes of its ASCII.
	esc := `"` + strings.ReplaceAll(strings.ReplaceAll(v, `\`, `\\`), `"`, `\u0022`) + `"`
	if got := string(m.result(json.RawMessage(esc))); got != `"`+mask+`"` {
		t.Errorf("\\u-escaped literal: %s", got)
	}
}

var errBase = errors.New("base")

// TestResultMaskOutsideStrings: a value that shows as a number, or across
// tokens, still leaves no trace in the stored result, which stays JSON.
func TestResultMaskOutsideStrings(t *testing.T) {
	t.Parallel()
	m := newMasker("", []maskedSecret{{Name: "pin", Value: "4111111111111111"}, {Name: "pair", Value: "7,8"}})
	cases := []struct{ in, want string }{
		{`{"card":4111111111111111}`, `{"card":"[secret:pin]"}`},
		{`[14111111111111111]`, `["1[secret:pin]"]`},
		{`[7,8]`, `"[[secret:pair]]"`},
		{`{"n":12,"s":"keep \/ as is"}`, `{"n":12,"s":"keep \/ as is"}`},
	}
	for _, c := range cases {
		got := string(m.result(json.RawMessage(c.in)))
		if got != c.want || !json.Valid([]byte(got)) {
			t.Errorf("result(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

// TestLogSinkMasksSecretSplitAtEveryOffset writes a value in two pieces,
// split at every byte offset and flushed between, and then in three
// pieces at every pair of offsets, for each of its forms: the stored log
// is exactly the masked text and no chunk holds a piece of the value.
func TestLogSinkMasksSecretSplitAtEveryOffset(t *testing.T) {
	t.Parallel()
	m := newMasker(testToken, []maskedSecret{testSecret})
	for _, form := range secretForms(testSecret.Value) {
		input := "head é " + form + " tail\n"
		want := m.text(input)
		for i := 0; i <= len(input); i++ {
			checkSplits(t, m, input, want, []int{i})
		}
		start := strings.Index(input, form)
		for i := start; i <= start+len(form); i++ {
			for j := i; j <= start+len(form); j++ {
				checkSplits(t, m, input, want, []int{i, j})
			}
		}
	}
}

// checkSplits writes input cut at offsets through a sink, flushing after
// each piece, and checks what was stored.
func checkSplits(t *testing.T, m *masker, input, want string, offsets []int) {
	t.Helper()
	sink, store := newMaskSink(m)
	last := 0
	for _, o := range append(offsets, len(input)) {
		_, _ = sink.Write([]byte(input[last:o]))
		sink.flush()
		last = o
	}
	tail := sink.Close()
	if got := store.text() + tail; got != want {
		t.Fatalf("split at %v: stored %q, want %q", offsets, got, want)
	}
	for _, c := range append(store.chunks, tail) {
		if !utf8.ValidString(c) {
			t.Fatalf("split at %v: chunk %q is not valid UTF-8", offsets, c)
		}
		if leaks(c, m) {
			t.Fatalf("split at %v: chunk %q holds a piece of a value", offsets, c)
		}
	}
}

// leaks reports whether chunk holds 4 or more bytes of any masked text
// outside the masks themselves.
func leaks(chunk string, m *masker) bool {
	if len(m.matches(chunk)) > 0 {
		return true // a whole value survived
	}
	rest := chunk
	for _, n := range m.needles {
		rest = strings.ReplaceAll(rest, n.mask, "")
	}
	for _, n := range m.needles {
		for i := 0; i+4 <= len(n.text); i++ {
			if p := n.text[i : i+4]; strings.Contains(rest, p) && !strings.Contains("head é  tail\n", p) {
				return true
			}
		}
	}
	return false
}

func newMaskSink(m *masker) (*logSink, *memLogs) {
	store := &memLogs{}
	cfg := Config{Store: store, MaxLogBytes: 1 << 20}
	cfg.LogFlushInterval = 1 << 62 // flushed by hand only
	fillDefaults(&cfg)
	return newLogSink(cfg, spine.Lease{}, m), store
}

// TestLogSinkOverlappingValues: two secrets whose values overlap, written
// byte by byte with a flush after each, leave neither value in the log.
func TestLogSinkOverlappingValues(t *testing.T) {
	t.Parallel()
	m := newMasker("", []maskedSecret{{Name: "a", Value: "abcdef"}, {Name: "b", Value: "defghi"}, {Name: "c", Value: "cdx"}})
	for _, input := range []string{"abcdefghi", "xabcdx", "abcdabcdefgh-defghiabc", "ccdxabcdefdefghi"} {
		sink, store := newMaskSink(m)
		for i := range len(input) {
			_, _ = sink.Write([]byte{input[i]})
			sink.flush()
		}
		got := store.text() + sink.Close()
		if got != m.text(input) || m.found(strings.NewReplacer("[secret:a]", "", "[secret:b]", "", "[secret:c]", "").Replace(got)) {
			t.Errorf("%q: stored %q, want %q", input, got, m.text(input))
		}
	}
}

// TestLogSinkHoldBackIsBounded: output that keeps looking like the start
// of a value is still appended: the sink never holds back more than twice
// the longest value, whatever the job writes.
func TestLogSinkHoldBackIsBounded(t *testing.T) {
	t.Parallel()
	value := strings.Repeat("a", 100) + "b"
	m := newMasker("", []maskedSecret{{Name: "s", Value: value}})
	sink, store := newMaskSink(m)
	for range 2000 {
		_, _ = sink.Write([]byte("aaaaaaa"))
		sink.flush()
		sink.mu.Lock()
		n := len(sink.buf)
		sink.mu.Unlock()
		if n >= 2*m.longest {
			t.Fatalf("holding back %d bytes", n)
		}
	}
	_, _ = sink.Write([]byte("b"))
	got := store.text() + sink.Close()
	if strings.Contains(got, value) || !strings.HasSuffix(got, "[secret:s]") || len(got) != 14000-100+len("[secret:s]") {
		t.Fatalf("stored %d bytes ending %q", len(got), got[len(got)-20:])
	}
}

// TestLogSinkNeverMasksTwice: a value that occurs in its own mask
// ("secret") is masked once, also in a chunk whose append failed and was
// sent again.
func TestLogSinkNeverMasksTwice(t *testing.T) {
	t.Parallel()
	m := newMasker("", []maskedSecret{{Name: "s", Value: "secret"}})
	store := &flakyLogs{fails: 1, err: errAppend}
	cfg := Config{Store: store, LogFlushInterval: 1 << 62}
	fillDefaults(&cfg)
	sink := newLogSink(cfg, spine.Lease{}, m)
	_, _ = sink.Write([]byte("my secret\n"))
	sink.flush() // fails: kept
	_, _ = sink.Write([]byte("more secret"))
	sink.flush()
	if got := store.text() + sink.Close(); got != "my [secret:s]\nmore [secret:s]" {
		t.Fatalf("stored %q", got)
	}
}

// TestLastLineMasksSecretCutByTail: a failure message built from the
// last line shows no piece of a long value, wherever the tail buffer's
// cut falls in it.
func TestLastLineMasksSecretCutByTail(t *testing.T) {
	t.Parallel()
	value := "BEGIN-" + strings.Repeat("K", 3000) + "-END"
	m := newMasker("", []maskedSecret{{Name: "pem", Value: value}})
	for _, after := range []int{0, 10, 500, 1023, 1024, 1500, 4000} {
		sink, _ := newMaskSink(m)
		_, _ = sink.Write([]byte("x\n" + value + strings.Repeat("z", after)))
		got := sink.LastLine()
		sink.Close()
		if strings.Contains(got, "KKKK") || strings.Contains(got, "-END") || strings.Contains(got, "BEGIN") {
			t.Errorf("%d bytes after the value: last line %q", after, got)
		}
	}
}
