package store

import (
	"errors"
	"testing"

	"github.com/windforce/windforce/catalog"
)

// TestHookSecret: a source's push hook secret is stored as given (the
// server recomputes the hosts' HMACs with it), kept by a put without one,
// replaced by a put with one, set and cleared later, and refused for an
// unknown source without a row written, on both databases.
func TestHookSecret(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		const first, second = "first secret 0123456789", "second secret 0123456789"
		get := func() catalog.Source {
			t.Helper()
			src, err := s.GetSource(ctx, "ws", "main")
			if err != nil {
				t.Fatal(err)
			}
			return src
		}
		src := catalog.Source{Workspace: "ws", ID: "main", URL: "file:///r.git", Branch: "main", HookSecret: first}
		if err := s.PutSource(ctx, src); err != nil {
			t.Fatal(err)
		}
		if got := get().HookSecret; got != first {
			t.Fatalf("hook secret after create = %q, want %q", got, first)
		}
		src.HookSecret, src.Branch = "", "dev"
		if err := s.PutSource(ctx, src); err != nil {
			t.Fatal(err)
		}
		if got := get(); got.HookSecret != first || got.Branch != "dev" {
			t.Fatalf("after a put without a secret: %+v, want the branch changed and the secret kept", got)
		}
		src.HookSecret = second
		if err := s.PutSource(ctx, src); err != nil {
			t.Fatal(err)
		}
		if got := get().HookSecret; got != second {
			t.Fatalf("hook secret after a put with one = %q, want %q", got, second)
		}
		if err := s.SetHookSecret(ctx, "ws", "main", first); err != nil {
			t.Fatal(err)
		}
		srcs, err := s.ListSources(ctx, "ws")
		if err != nil || len(srcs) != 1 || srcs[0].HookSecret != first || srcs[0].Branch != "dev" {
			t.Fatalf("ListSources after SetHookSecret = %+v, %v; want the secret set, the branch kept", srcs, err)
		}
		if err := s.SetHookSecret(ctx, "ws", "main", ""); err != nil {
			t.Fatal(err)
		}
		if got := get().HookSecret; got != "" {
			t.Fatalf("hook secret after clearing = %q", got)
		}
		if err := s.SetHookSecret(ctx, "ws", "nope", first); !errors.Is(err, catalog.ErrNotFound) {
			t.Fatalf("SetHookSecret(unknown source) = %v, want catalog.ErrNotFound", err)
		}
		if _, err := s.GetSource(ctx, "ws", "nope"); !errors.Is(err, catalog.ErrNotFound) {
			t.Fatalf("SetHookSecret created a source: GetSource = %v", err)
		}
	})
}
