package spine_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/spine"
)

// TestOneNotFound checks that every kind's "not found", wrapped as the
// stores wrap it, matches spine.ErrNotFound and itself but no other kind,
// and keeps its own text.
func TestOneNotFound(t *testing.T) {
	kinds := map[string]error{
		"not found in catalog": catalog.ErrNotFound,
		"token not found":      auth.ErrNotFound,
		"session not found":    auth.ErrSessionNotFound,
		"schedule not found":   schedule.ErrNotFound,
	}
	for text, kind := range kinds {
		err := fmt.Errorf("read it: %w", kind)
		if !errors.Is(err, spine.ErrNotFound) {
			t.Errorf("%q does not match spine.ErrNotFound", text)
		}
		if kind.Error() != text {
			t.Errorf("text = %q, want %q", kind.Error(), text)
		}
		for other, o := range kinds {
			if errors.Is(err, o) != (other == text) {
				t.Errorf("%q matches %q: %v", text, other, errors.Is(err, o))
			}
		}
	}
	if errors.Is(spine.ErrNotFound, catalog.ErrNotFound) {
		t.Error("a job's not-found matches the catalog's")
	}
}
