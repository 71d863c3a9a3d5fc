package source_test

import (
	"testing"

	"github.com/windforce/windforce/source"
)

// TestValidDeployPath: a deploy writes only inside the working tree, never
// into .git in any letter case (".GIT/hooks" is the real hooks folder on a
// case-insensitive file system).
func TestValidDeployPath(t *testing.T) {
	for _, c := range []struct {
		p  string
		ok bool
	}{
		{"src/main.ts", true},
		{"windforce.yaml", true},
		{"a/./b", true},
		{"", false},
		{"/etc/passwd", false},
		{"../x", false},
		{"a/../../x", false},
		{".", false},
		{".git/hooks/pre-commit", false},
		{".GIT/hooks/pre-commit", false},
		{"sub/.Git/config", false},
		{"a\\b", false},
		{"a\x00b", false},
		{"\xff", false},
		{".github/workflows/x.yml", true},
	} {
		if got := source.ValidDeployPath(c.p); got != c.ok {
			t.Errorf("ValidDeployPath(%q) = %t, want %t", c.p, got, c.ok)
		}
	}
}
