package postgres

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestNamedArgsRewriteOnce: a statement's names become $n in the order
// pgx gives them, the same on every call (the second from the cache),
// with pgx.StrictNamedArgs's errors for a missing and an extra name.
func TestNamedArgsRewriteOnce(t *testing.T) {
	ctx := context.Background()
	const sql = "-- @not_a_name in a comment\nSELECT @b::int, @a::text, @b::int + 1, '@c'"
	for range 2 {
		text, args, err := namedArgs{"a": "x", "b": 2}.RewriteQuery(ctx, nil, sql, nil)
		if err != nil {
			t.Fatalf("rewrite: %v", err)
		}
		if want := "-- @not_a_name in a comment\nSELECT $1::int, $2::text, $1::int + 1, '@c'"; text != want {
			t.Fatalf("text %q, want %q", text, want)
		}
		if !slices.Equal(args, []any{2, "x"}) {
			t.Fatalf("args %v, want [2 x]", args)
		}
	}
	if _, _, err := (namedArgs{"a": "x"}).RewriteQuery(ctx, nil, sql, nil); err == nil || !strings.Contains(err.Error(), "b found in sql query but not present") {
		t.Fatalf("missing b: %v", err)
	}
	if _, _, err := (namedArgs{"a": "x", "b": 2, "z": 3}).RewriteQuery(ctx, nil, sql, nil); err == nil || !strings.Contains(err.Error(), "z of StrictNamedArgs not found") {
		t.Fatalf("extra z: %v", err)
	}
	if _, _, err := (namedArgs{"a": "x", "z": 3}).RewriteQuery(ctx, nil, sql, nil); err == nil {
		t.Fatal("b missing and z extra, same count: no error")
	}
}
