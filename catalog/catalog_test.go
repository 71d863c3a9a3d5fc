package catalog_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

func TestPinInheritsAndOverrides(t *testing.T) {
	t.Parallel()
	app := catalog.App{Key: "a", SourceID: "s", CommitSHA: "c", Entrypoint: "e", Runtime: "bun",
		Timeout: time.Minute, Tag: "default", Retry: spine.DefaultRetry}
	p := catalog.Pin(app, catalog.Action{Key: "x"})
	if p.Timeout != time.Minute || p.Tag != "default" || p.Retry != spine.DefaultRetry || p.ActionKey != "x" || p.CommitSHA != "c" {
		t.Fatalf("inherited pin = %+v", p)
	}
	r := spine.RetryPolicy{MaxAttempts: 4, Backoff: time.Second, Factor: 2}
	p = catalog.Pin(app, catalog.Action{Key: "y", Timeout: time.Second, Tag: "gpu", Retry: &r})
	if p.Timeout != time.Second || p.Tag != "gpu" || p.Retry != r {
		t.Fatalf("overridden pin = %+v", p)
	}
}

// TestPinMergesLimits: an action's limits override the app's field by
// field; a field neither sets stays zero (the worker's default).
func TestPinMergesLimits(t *testing.T) {
	t.Parallel()
	app := catalog.App{Key: "a", Limits: spine.Limits{Memory: 512 << 20, Pids: 256}}
	cases := []struct {
		action, want spine.Limits
	}{
		{spine.Limits{}, spine.Limits{Memory: 512 << 20, Pids: 256}},
		{spine.Limits{CPU: 0.5}, spine.Limits{Memory: 512 << 20, Pids: 256, CPU: 0.5}},
		{spine.Limits{Memory: 1 << 30, Pids: 8, CPU: 2}, spine.Limits{Memory: 1 << 30, Pids: 8, CPU: 2}},
	}
	for _, c := range cases {
		if got := catalog.Pin(app, catalog.Action{Key: "x", Limits: c.action}).Limits; got != c.want {
			t.Errorf("action limits %+v pin %+v, want %+v", c.action, got, c.want)
		}
	}
	if got := catalog.Pin(catalog.App{}, catalog.Action{Limits: spine.Limits{Pids: 3}}).Limits; got != (spine.Limits{Pids: 3}) {
		t.Errorf("action alone pins %+v", got)
	}
}

func TestValidateInput(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(`{"type":"object","required":["name"],"properties":{"name":{"type":"string"},` +
		`"tags":{"type":"array","items":{"type":"integer"}}},"additionalProperties":false}`)
	ok := []string{`{"name":"a"}`, `{"name":"a","tags":[1,2]}`}
	for _, in := range ok {
		if err := catalog.ValidateInput(schema, json.RawMessage(in)); err != nil {
			t.Errorf("ValidateInput(%s): %v", in, err)
		}
	}
	bad := map[string]string{
		`{"name":1}`:                  "/name",
		`{"name":"a","tags":[1,"x"]}`: "/tags/1",
		`{"name":"a","extra":true}`:   "",
		`[]`:                          "",
		``:                            "",
	}
	for in, ptr := range bad {
		err := catalog.ValidateInput(schema, json.RawMessage(in))
		var ie *catalog.InputError
		if !errors.As(err, &ie) || !errors.Is(err, catalog.ErrInvalidInput) {
			t.Errorf("ValidateInput(%s) = %v; want an *InputError", in, err)
			continue
		}
		if ie.Fields[0].Pointer != ptr {
			t.Errorf("ValidateInput(%s) pointer %q, want %q (%v)", in, ie.Fields[0].Pointer, ptr, err)
		}
		if ptr != "" && !strings.Contains(err.Error(), ptr+": ") {
			t.Errorf("error %q does not name %s", err, ptr)
		}
	}
	if err := catalog.ValidateInput(nil, json.RawMessage(`{"anything":1}`)); err != nil {
		t.Errorf("no schema: %v", err)
	}
}

func TestCompileSchemaNoExternalRefs(t *testing.T) {
	t.Parallel()
	for _, ref := range []string{"file:///etc/passwd", "https://example.com/s.json", "other.json"} {
		if _, err := catalog.CompileSchema([]byte(`{"$ref":"` + ref + `"}`)); err == nil {
			t.Errorf("schema with $ref %s compiled", ref)
		}
	}
	if _, err := catalog.CompileSchema([]byte(`{"$defs":{"n":{"type":"string"}},"$ref":"#/$defs/n"}`)); err != nil {
		t.Errorf("local $ref refused: %v", err)
	}
}
