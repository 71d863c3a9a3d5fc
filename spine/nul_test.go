package spine_test

import (
	"encoding/json"
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
