package schemaform

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

// sameJSON compares two documents by value, keeping number text.
func sameJSON(t *testing.T, got, want []byte) {
	t.Helper()
	g, err1 := decode(got)
	w, err2 := decode(want)
	if err1 != nil || err2 != nil || canonical(g) != canonical(w) {
		t.Errorf("JSON = %s, want %s", got, want)
	}
}

// TestParseRoundTrip renders the defaults (or values), posts the form
// as a browser would, and parses it back to the same input.
func TestParseRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, schema, values, want string
	}{
		{"greet", `{"type":"object","required":["name"],"properties":{"name":{"type":"string","minLength":1}}}`, ``, `{"name":""}`},
		{"fail", `{"type":"object","properties":{"fail":{"type":"boolean","default":true},"message":{"type":"string"}}}`, ``, `{"fail":true}`},
		{"sleep", `{"type":"object","required":["seconds"],"properties":{"seconds":{"type":"number","minimum":0}}}`, `{"seconds":1.5}`, `{"seconds":1.5}`},
		{"nested defaults", string(nested), ``,
			`{"customer":{"name":"ann"},"items":[{"sku":"a","qty":1,"gift":false},{"sku":"b","qty":2.5,"gift":true}],"size":"m"}`},
		{"nested values", string(nested),
			`{"customer":{"name":"bo","email":"bo@example.com"},"items":[{"sku":"x","qty":3,"gift":false,"tags":["p","q"]}],"size":"l"}`,
			`{"customer":{"name":"bo","email":"bo@example.com"},"items":[{"sku":"x","qty":3,"gift":false,"tags":["p","q"]}],"size":"l"}`},
		{"types", `{"type":"object","properties":{
			"i":{"type":"integer"},"big":{"type":"integer"},"n":{"type":"number"},"b":{"type":"boolean"},
			"d":{"type":"string","format":"date"},"t":{"type":"string","format":"date-time"},
			"e":{"enum":[1,"1",null,{"k":[1]}]},"nul":{"type":["integer","null"]},
			"m":{"type":"array","items":{"type":"array","items":{"type":"integer"}}}}}`,
			`{"i":-7,"big":123456789012345678901234567890,"n":1e-7,"b":true,"d":"2026-11-30","t":"2026-11-30T12:04:05Z","e":{"k":[1]},"m":[[1,2],[],[3]]}`,
			`{"i":-7,"big":123456789012345678901234567890,"n":1e-7,"b":true,"d":"2026-11-30","t":"2026-11-30T12:04:05Z","e":{"k":[1]},"m":[[1,2],[],[3]]}`},
		{"escaped keys", `{"type":"object","properties":{"a/b":{"type":"string"},"c~d":{"type":"array","items":{"type":"string"}}}}`,
			`{"a/b":"x","c~d":["y"]}`, `{"a/b":"x","c~d":["y"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := Render(json.RawMessage(tt.schema), json.RawMessage(tt.values), nil)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			form := post(parseHTML(t, h))
			form.Set("csrf", "token") // not in the schema: ignored
			got, err := Parse(json.RawMessage(tt.schema), form)
			if err != nil {
				t.Fatalf("Parse(%v): %v", form, err)
			}
			sameJSON(t, got, []byte(tt.want))
		})
	}
}

// TestParseKeepsSchemaOrder checks properties come out in schema order.
func TestParseKeepsSchemaOrder(t *testing.T) {
	t.Parallel()
	schema := obj(`"z":{"type":"string"},"a":{"type":"string"},"m":{"type":"string"}`)
	got, err := Parse(schema, url.Values{"/a": {"2"}, "/z": {"1"}, "/m": {"3"}})
	if err != nil || string(got) != `{"z":"1","a":"2","m":"3"}` {
		t.Errorf("got %s, %v", got, err)
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(`{"type":"object","required":["name","count","opt"],"properties":{
		"name":{"type":"string"},
		"note":{"type":"string"},
		"count":{"type":"integer"},
		"ratio":{"type":"number"},
		"on":{"type":"boolean"},
		"opt":{"type":"object","properties":{"x":{"type":"string"}}},
		"extra":{"type":"object","properties":{"y":{"type":"string"}}},
		"color":{"enum":["red","blue"]},
		"tags":{"type":"array","items":{"type":"string"}},
		"rows":{"type":"array","items":{"type":"object","properties":{"q":{"type":"integer"}}}},
		"maybe":{"type":["number","null"]}
	}}`)
	tests := []struct {
		name string
		form string // url-encoded
		want string
		errs map[string]string // pointer → message of each *FieldError
	}{
		{"empty post", ``, `{"name":"","opt":{}}`, map[string]string{"/count": "enter a number"}},
		{"empty optional left out", `/name=a&/count=1&/note=&/ratio=&/color=&/opt/x=`, `{"name":"a","count":1,"opt":{}}`, nil},
		{"integer forms", `/name=a&/count=3.0`, `{"name":"a","count":3,"opt":{}}`, nil},
		{"integer exponent", `/name=a&/count=1e3`, `{"name":"a","count":1000,"opt":{}}`, nil},
		{"bad integer", `/name=a&/count=1.5`, `{"name":"a","count":"1.5","opt":{}}`, map[string]string{"/count": "must be a whole number"}},
		{"bad number", `/name=a&/count=1&/ratio=abc`, `{"name":"a","count":1,"ratio":"abc","opt":{}}`, map[string]string{"/ratio": "must be a number"}},
		{"infinite number", `/name=a&/count=1&/ratio=Infinity`, `{"name":"a","count":1,"ratio":"Infinity","opt":{}}`, map[string]string{"/ratio": "must be a number"}},
		{"number not JSON text", `/name=a&/count=1&/ratio=.5`, `{"name":"a","count":1,"ratio":0.5,"opt":{}}`, nil},
		{"checkbox off", `/name=a&/count=1&/on=false`, `{"name":"a","count":1,"on":false,"opt":{}}`, nil},
		{"checkbox on", `/name=a&/count=1&/on=false&/on=true`, `{"name":"a","count":1,"on":true,"opt":{}}`, nil},
		{"checkbox junk", `/name=a&/count=1&/on=maybe`, `{"name":"a","count":1,"on":"maybe","opt":{}}`, map[string]string{"/on": "must be true or false"}},
		{"enum", `/name=a&/count=1&/color=%22blue%22`, `{"name":"a","count":1,"opt":{},"color":"blue"}`, nil},
		{"enum not JSON", `/name=a&/count=1&/color=blue`, `{"name":"a","count":1,"opt":{},"color":"blue"}`, map[string]string{"/color": "is not one of the choices"}},
		{"nested optional", `/name=a&/count=1&/extra/y=z`, `{"name":"a","count":1,"opt":{},"extra":{"y":"z"}}`, nil},
		{"array gaps closed", `/name=a&/count=1&/tags/3=c&/tags/0=a&/tags/10=d&/tags/-=t&/tags/01=x`, `{"name":"a","count":1,"opt":{},"tags":["a","c","d"]}`, nil},
		{"array empty string rows kept", `/name=a&/count=1&/tags/0=&/tags/1=b`, `{"name":"a","count":1,"opt":{},"tags":["","b"]}`, nil},
		{"error at closed index", `/name=a&/count=1&/rows/2/q=1&/rows/5/q=x`, `{"name":"a","count":1,"opt":{},"rows":[{"q":1},{"q":"x"}]}`,
			map[string]string{"/rows/1/q": "must be a whole number"}},
		{"empty object row kept", `/name=a&/count=1&/rows/0/q=`, `{"name":"a","count":1,"opt":{},"rows":[{}]}`, nil},
		{"nullable", `/name=a&/count=1&/maybe=`, `{"name":"a","count":1,"opt":{}}`, nil},
		{"two errors", `/name=a&/count=x&/ratio=y`, `{"name":"a","count":"x","ratio":"y","opt":{}}`,
			map[string]string{"/count": "must be a whole number", "/ratio": "must be a number"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			form, err := url.ParseQuery(tt.form)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse(schema, form)
			sameJSON(t, got, []byte(tt.want))
			if tt.errs == nil {
				if err != nil {
					t.Errorf("err = %v", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want *FieldError", err)
			}
			got2 := Errors(err)
			if len(got2) != len(tt.errs) {
				t.Errorf("errors = %v, want %v", got2, tt.errs)
			}
			for p, m := range tt.errs {
				if got2[p] != m {
					t.Errorf("error at %q = %q, want %q", p, got2[p], m)
				}
			}
		})
	}
}

// TestParseErrorRerender shows a refused post again: the bad value and
// its message are back on the field.
func TestParseErrorRerender(t *testing.T) {
	t.Parallel()
	form := url.Values{"/items/0/sku": {"a"}, "/items/0/qty": {"lots"}, "/customer/name": {"ann"}, "/size": {`"s"`}}
	got, err := Parse(nested, form)
	errs := Errors(err)
	if errs["/items/0/qty"] != "must be a number" {
		t.Fatalf("errs = %v", errs)
	}
	doc := render(t, nested, string(got), errs)
	q := doc.control(t, "/items/0/qty")
	if q.Attr["value"] != "lots" || q.Attr["aria-invalid"] != "true" || doc.byID(t, "sf.items.0.qty__err").Text != "must be a number" {
		t.Errorf("qty: %v", q.Attr)
	}
}

func TestErrorsHelper(t *testing.T) {
	t.Parallel()
	if Errors(nil) != nil || Errors(errors.New("x")) != nil {
		t.Error("no field errors: want nil")
	}
	wrapped := errors.Join(errors.New("other"), &FieldError{Pointer: "/a", Message: "m"})
	if got := Errors(wrapped); got["/a"] != "m" || len(got) != 1 {
		t.Errorf("Errors = %v", got)
	}
	if (&FieldError{Pointer: "/a", Message: "m"}).Error() != "/a: m" {
		t.Error("FieldError text")
	}
}

// TestParseExamples posts the rendered defaults of examples/hello and
// checks the result is valid JSON.
func TestParseExamples(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../../examples/hello/schemas/*.input.json")
	for _, f := range files {
		schema, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h, err := Render(schema, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(schema, post(parseHTML(t, h)))
		if err != nil && Errors(err) == nil {
			t.Errorf("%s: %v", f, err)
		}
		if !json.Valid(got) || !bytes.HasPrefix(got, []byte("{")) {
			t.Errorf("%s: %s", f, got)
		}
	}
}

// FuzzParse posts arbitrary forms against arbitrary schemas: Parse may
// refuse but never panics, and what it returns is JSON.
func FuzzParse(f *testing.F) {
	f.Add([]byte(nested), "/items/0/qty=1&/items/3/sku=x&/size=%22m%22")
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"integer"}}}`), "/a=1e400")
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"array","items":{"$ref":"#/$defs/x"}}},"$defs":{"x":{"type":"number"}}}`), "/a/0=1&/a/99999=2")
	f.Add([]byte(`{"type":"object","properties":{"b":{"type":["boolean","null"]}}}`), "/b=on&/b=x")
	f.Fuzz(func(t *testing.T, schema []byte, query string) {
		form, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		out, err := Parse(schema, form)
		if err == nil || Errors(err) != nil {
			if !json.Valid(out) {
				t.Fatalf("Parse returned invalid JSON %q (err %v)", out, err)
			}
		}
		_, _ = Render(schema, out, Errors(err))
	})
}
