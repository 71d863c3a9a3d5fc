package sandbox

import (
	"slices"
	"testing"
)

// TestEffectiveHides: a repeated directory and one below another hidden
// directory are dropped, unless the spec shows a path the inner one lies
// under (then it still hides something).
func TestEffectiveHides(t *testing.T) {
	spec := Spec{ReadOnly: []string{"/wf/commits/c1"}, Writable: []string{"/wf/jobs/j1"}}
	for _, c := range []struct {
		hide, want []string
	}{
		{[]string{"/wf", "/wf", "/wf/objects"}, []string{"/wf"}},
		{[]string{"/wf/objects", "/wf"}, []string{"/wf"}},
		{[]string{"/wf", "/db"}, []string{"/wf", "/db"}},
		{[]string{"/wf", "/wf-other"}, []string{"/wf", "/wf-other"}},
		{[]string{"/wf", "/wf/commits/c1/secret"}, []string{"/wf", "/wf/commits/c1/secret"}},
	} {
		if got := effectiveHides(c.hide, spec); !slices.Equal(got, c.want) {
			t.Errorf("effectiveHides(%v) = %v, want %v", c.hide, got, c.want)
		}
	}
}
