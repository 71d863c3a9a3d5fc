package spine_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/windforce/windforce/spine"
)

// TestHasNUL: NUL in a string or key, raw or escaped, is found; an escaped
// backslash followed by "u0000" is ordinary text.
func TestHasNUL(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{`{"a":"b"}`, false},
		{`{"a":"x\u0000y"}`, true},
		{`{"x\u0000":1}`, true},
		{`["\u0000"]`, true},
		{"{\"a\":\"x\x00\"}", true},
		{`{"a":"x\\u0000y"}`, false},
		{`{"a":"\\\u0000"}`, true},
		{`{"a":"\u0001"}`, false},
	} {
		if got := spine.HasNUL(json.RawMessage(c.in)); got != c.want {
			t.Errorf("HasNUL(%s) = %t, want %t", c.in, got, c.want)
		}
	}
}

// TestCheckTextSurrogates: a lone surrogate escape, high or low, is refused
// as invalid; a pair is text; an escaped backslash before "ud800" is text.
func TestCheckTextSurrogates(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{`{"name":"\ud800"}`, false},
		{`{"name":"\uDC00"}`, false},
		{`{"name":"\ud83d\ude00"}`, true},
		{`{"name":"\ud83D\uDE00x"}`, true},
		{`{"name":"\ud83dx"}`, false},
		{`{"name":"\ud83d\n"}`, false},
		{`{"name":"\ud83d\ud83d\ude00"}`, false},
		{`{"\ud800":1}`, false},
		{`{"name":"\\ud800"}`, true},
		{`{"name":"é😀"}`, true},
	} {
		err := spine.CheckText("input", json.RawMessage(c.in))
		if (err == nil) != c.ok {
			t.Errorf("CheckText(%s) = %v, want ok=%t", c.in, err, c.ok)
		}
		if err != nil && !errors.Is(err, spine.ErrInvalid) {
			t.Errorf("CheckText(%s) = %v, want ErrInvalid", c.in, err)
		}
	}
}
