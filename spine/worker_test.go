package spine

import (
	"context"
	"errors"
	"testing"
)

type scriptFailure struct{ e JobError }

func (f *scriptFailure) Error() string      { return f.e.Message }
func (f *scriptFailure) JobError() JobError { return f.e }

func TestJobErrorKeepsAHandlersOwnDescription(t *testing.T) {
	t.Parallel()
	want := JobError{Message: "TypeError: x is undefined", Stack: "at main (src/main.ts:3)", Kind: "throw"}
	got := jobError(context.Background(), fmtWrap(&scriptFailure{e: want}))
	if got != want {
		t.Fatalf("jobError = %+v, want %+v", got, want)
	}
	if plain := jobError(context.Background(), errors.New("boom")); plain != (JobError{Message: "boom"}) {
		t.Fatalf("plain error = %+v", plain)
	}
}

// fmtWrap wraps like a handler that adds context to the error it returns.
func fmtWrap(err error) error { return errors.Join(err) }
