package schemaform

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// obj wraps property schemas into an input schema.
func obj(props string, required ...string) json.RawMessage {
	req, _ := json.Marshal(required)
	if required == nil {
		req = []byte("[]")
	}
	return json.RawMessage(`{"type":"object","required":` + string(req) + `,"properties":{` + props + `}}`)
}

func render(t *testing.T, schema json.RawMessage, values string, errs map[string]string) *elem {
	t.Helper()
	h, err := Render(schema, json.RawMessage(values), errs)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return parseHTML(t, h)
}

func TestRenderTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		prop   string
		tag    string
		attrs  map[string]string // "" value: attribute present, any value
		absent []string
	}{
		{"string", `{"type":"string"}`, "input", map[string]string{"type": "text"}, []string{"required", "minlength"}},
		{"string limits", `{"type":"string","minLength":2,"maxLength":9,"pattern":"^a+$"}`, "input",
			map[string]string{"type": "text", "minlength": "2", "maxlength": "9", "pattern": ".*(?:^a+$).*", "data-sf-pattern": "^a+$"}, nil},
		{"date", `{"type":"string","format":"date"}`, "input", map[string]string{"type": "date"}, nil},
		{"date-time", `{"type":"string","format":"date-time"}`, "input", map[string]string{"type": "datetime-local", "step": "1"}, nil},
		{"email", `{"type":"string","format":"email"}`, "input", map[string]string{"type": "email"}, nil},
		{"uri", `{"type":"string","format":"uri"}`, "input", map[string]string{"type": "url"}, nil},
		{"unknown format", `{"type":"string","format":"hostname"}`, "input", map[string]string{"type": "text"}, nil},
		{"long string", `{"type":"string","maxLength":5000}`, "textarea", map[string]string{"maxlength": "5000"}, []string{"type", "pattern"}},
		{"number", `{"type":"number","minimum":0,"maximum":3600}`, "input",
			map[string]string{"type": "number", "step": "any", "min": "0", "max": "3600"}, nil},
		{"number exclusive", `{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1.5}`, "input",
			map[string]string{"type": "number", "step": "any", "data-sf-xmin": "0", "data-sf-xmax": "1.5"}, []string{"min", "max"}},
		{"integer", `{"type":"integer","minimum":0.5,"maximum":10.5}`, "input",
			map[string]string{"type": "number", "step": "1", "min": "1", "max": "10"}, nil},
		{"integer exclusive", `{"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":10}`, "input",
			map[string]string{"step": "1", "min": "1", "max": "9"}, []string{"data-sf-xmin"}},
		{"integer multipleOf", `{"type":"integer","multipleOf":5}`, "input", map[string]string{"step": "5"}, nil},
		{"nullable integer", `{"type":["integer","null"]}`, "input", map[string]string{"type": "number", "step": "1"}, nil},
		{"boolean", `{"type":"boolean"}`, "input", map[string]string{"type": "checkbox", "value": "true"}, []string{"checked", "required"}},
		{"enum", `{"type":"string","enum":["a","b"]}`, "select", nil, []string{"required"}},
		{"enum without type", `{"enum":[1,"x",null]}`, "select", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := render(t, obj(`"x":`+tt.prop), "", nil)
			c := doc.control(t, "/x")
			if c.Tag != tt.tag {
				t.Fatalf("tag = %s, want %s", c.Tag, tt.tag)
			}
			for a, want := range tt.attrs {
				got, ok := c.Attr[a]
				if !ok || (want != "" && got != want) {
					t.Errorf("%s = %q (present %v), want %q", a, got, ok, want)
				}
			}
			for _, a := range tt.absent {
				if c.has(a) {
					t.Errorf("%s present, want absent", a)
				}
			}
			if c.Attr["id"] != "sf.x" {
				t.Errorf("id = %q", c.Attr["id"])
			}
			labels := doc.all(func(e *elem) bool { return e.Tag == "label" && e.Attr["for"] == "sf.x" })
			if len(labels) != 1 || !strings.HasPrefix(labels[0].Text, "x") {
				t.Errorf("label for sf.x: %d labels", len(labels))
			}
		})
	}
}

func TestRenderBooleanHiddenCompanion(t *testing.T) {
	t.Parallel()
	doc := render(t, obj(`"b":{"type":"boolean","default":true}`), "", nil)
	hidden := doc.all(func(e *elem) bool { return e.Attr["name"] == "/b" && e.Attr["type"] == "hidden" })
	if len(hidden) != 1 || hidden[0].Attr["value"] != "false" {
		t.Fatalf("hidden companion: %+v", hidden)
	}
	if !doc.control(t, "/b").has("checked") {
		t.Error("default true not checked")
	}
}

func TestRenderRequiredDefaultDescription(t *testing.T) {
	t.Parallel()
	schema := obj(`"name":{"type":"string","title":"Your name","description":"who to greet","default":"world"},
		"age":{"type":"integer","default":42},
		"note":{"type":"string"}`, "name")
	doc := render(t, schema, "", nil)

	name := doc.control(t, "/name")
	if !name.has("required") || name.Attr["aria-required"] != "true" {
		t.Errorf("required name: %v", name.Attr)
	}
	if name.Attr["value"] != "world" {
		t.Errorf("default = %q", name.Attr["value"])
	}
	if name.Attr["aria-describedby"] != "sf.name__help" {
		t.Errorf("aria-describedby = %q", name.Attr["aria-describedby"])
	}
	if got := doc.byID(t, "sf.name__help").Text; got != "who to greet" {
		t.Errorf("help = %q", got)
	}
	label := doc.all(func(e *elem) bool { return e.Tag == "label" && e.Attr["for"] == "sf.name" })[0]
	if !strings.Contains(label.Text, "Your name") || !strings.Contains(label.Text, "*") {
		t.Errorf("label = %q, want title and *", label.Text)
	}
	if got := doc.control(t, "/age").Attr["value"]; got != "42" {
		t.Errorf("age default = %q", got)
	}
	note := doc.control(t, "/note")
	if note.has("required") || note.has("aria-describedby") || note.Attr["value"] != "" {
		t.Errorf("note: %v", note.Attr)
	}
	raw := doc.byID(t, "sf__raw")
	var got map[string]any
	if err := json.Unmarshal([]byte(raw.Text), &got); err != nil || got["name"] != "world" || got["age"] != 42.0 || len(got) != 2 {
		t.Errorf("raw pane = %q (%v)", raw.Text, err)
	}
	if raw.Attr["name"] != RawField || doc.byID(t, "sf__rawmode").Attr["name"] != RawModeField {
		t.Error("raw pane names")
	}
}

func TestRenderValuesOverDefaults(t *testing.T) {
	t.Parallel()
	schema := obj(`"name":{"type":"string","default":"world"},"on":{"type":"boolean","default":true},
		"when":{"type":"string","format":"date-time"}`)
	doc := render(t, schema, `{"name":"ann","when":"2026-11-30T13:04:05+01:00"}`, nil)
	if got := doc.control(t, "/name").Attr["value"]; got != "ann" {
		t.Errorf("name = %q", got)
	}
	if doc.control(t, "/on").has("checked") {
		t.Error("values given without on: want unchecked")
	}
	if got := doc.control(t, "/when").Attr["value"]; got != "2026-11-30T12:04:05" {
		t.Errorf("when = %q, want UTC wall time", got)
	}
}

func TestRenderEnum(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		prop     string
		required bool
		values   string
		options  []string // option values in order
		selected string
	}{
		{"optional", `{"enum":["a","b"]}`, false, "", []string{"", `"a"`, `"b"`}, ""},
		{"optional default", `{"enum":["a","b"],"default":"b"}`, false, "", []string{"", `"a"`, `"b"`}, `"b"`},
		{"required no default", `{"enum":["a","b"]}`, true, "", []string{"", `"a"`, `"b"`}, ""},
		{"required default", `{"enum":["a","b"],"default":"a"}`, true, "", []string{`"a"`, `"b"`}, `"a"`},
		{"mixed types", `{"enum":[1,"1",true,null,""]}`, false, `{"x":"1"}`, []string{"", "1", `"1"`, "true", "null", `""`}, `"1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var req []string
			if tt.required {
				req = []string{"x"}
			}
			doc := render(t, obj(`"x":`+tt.prop, req...), tt.values, nil)
			sel := doc.control(t, "/x")
			if sel.has("required") != tt.required {
				t.Errorf("required = %v", sel.has("required"))
			}
			var got []string
			selected := ""
			for _, o := range sel.all(func(e *elem) bool { return e.Tag == "option" }) {
				got = append(got, o.Attr["value"])
				if o.has("selected") {
					selected = o.Attr["value"]
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.options, "|") {
				t.Errorf("options = %q, want %q", got, tt.options)
			}
			if selected != tt.selected {
				t.Errorf("selected = %q, want %q", selected, tt.selected)
			}
		})
	}
}

// nested is an input with objects and arrays inside each other.
var nested = json.RawMessage(`{
  "type": "object",
  "required": ["customer", "items"],
  "properties": {
    "customer": {"type": "object", "title": "Customer", "required": ["name"], "properties": {
      "name": {"type": "string", "default": "ann"},
      "email": {"type": "string", "format": "email"}
    }},
    "items": {"type": "array", "minItems": 1, "maxItems": 5, "default": [{"sku": "a", "qty": 1}, {"sku": "b", "qty": 2.5, "gift": true}],
      "items": {"type": "object", "title": "Line", "required": ["sku", "qty"], "properties": {
        "sku": {"type": "string"},
        "qty": {"type": "number", "exclusiveMinimum": 0},
        "gift": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}}
      }}},
    "size": {"$ref": "#/$defs/size", "title": "Size"}
  },
  "$defs": {"size": {"enum": ["s", "m", "l"], "default": "m"}}
}`)

func TestRenderNestedAndRows(t *testing.T) {
	t.Parallel()
	doc := render(t, nested, "", nil)
	cust := doc.byID(t, "sf.customer")
	if cust.Tag != "fieldset" || cust.Children[0].Tag != "legend" || !strings.Contains(cust.Children[0].Text, "Customer") {
		t.Errorf("customer fieldset: %+v", cust.Children[0])
	}
	if got := doc.control(t, "/customer/name").Attr["value"]; got != "ann" {
		t.Errorf("nested default = %q", got)
	}
	arr := doc.byID(t, "sf.items")
	if arr.Attr["data-sf-name"] != "/items" || arr.Attr["data-sf-id"] != "sf.items" || arr.Attr["data-sf-min"] != "1" || arr.Attr["data-sf-max"] != "5" {
		t.Errorf("array attrs: %v", arr.Attr)
	}
	rows := arr.all(func(e *elem) bool { return e.has("data-sf-row") && !e.inTemplate() && e.Parent.Parent == arr })
	if len(rows) != 2 || rows[1].Attr["data-sf-index"] != "1" {
		t.Fatalf("rows: %d", len(rows))
	}
	if got := doc.control(t, "/items/1/qty").Attr["value"]; got != "2.5" {
		t.Errorf("row value = %q", got)
	}
	if !doc.control(t, "/items/1/gift").has("checked") {
		t.Error("row checkbox not checked")
	}
	if n := len(arr.all(func(e *elem) bool { return e.has("data-sf-add") })); n != 4 {
		t.Errorf("add buttons (items, tags in the template and in 2 rows) = %d", n)
	}
	tpl := arr.all(func(e *elem) bool { return e.Tag == "template" && e.Parent == arr })
	if len(tpl) != 1 || len(tpl[0].all(func(e *elem) bool { return e.Attr["name"] == "/items/-/qty" })) != 1 {
		t.Error("row template with index -")
	}
	if got := doc.control(t, "/size"); got.Tag != "select" || !strings.Contains(doc.all(func(e *elem) bool { return e.Attr["for"] == "sf.size" })[0].Text, "Size") {
		t.Errorf("$ref field: %v", got.Attr)
	}
}

func TestRenderMinItemsRows(t *testing.T) {
	t.Parallel()
	doc := render(t, obj(`"tags":{"type":"array","minItems":2,"items":{"type":"string"}}`), "", nil)
	doc.control(t, "/tags/0")
	doc.control(t, "/tags/1")
}

func TestRenderIDsAndLabels(t *testing.T) {
	t.Parallel()
	schema := obj(`"a/b":{"type":"string"},"a.b":{"type":"string"},"a_b":{"type":"string"},"a~b":{"type":"string"},
		"é":{"type":"integer"},"n":{"type":"object","properties":{"b":{"type":"string"}}},"a":{"type":"object","properties":{"b":{"type":"string"}}}`)
	doc := render(t, schema, "", nil)
	ids := map[string]bool{}
	for _, e := range doc.all(func(e *elem) bool { return e.has("id") }) {
		if ids[e.Attr["id"]] {
			t.Errorf("duplicate id %q", e.Attr["id"])
		}
		ids[e.Attr["id"]] = true
	}
	for _, c := range doc.all(isControl) {
		if c.Attr["type"] == "hidden" {
			continue
		}
		id := c.Attr["id"]
		if id == "" || len(doc.all(func(e *elem) bool { return e.Tag == "label" && e.Attr["for"] == id })) != 1 {
			t.Errorf("control %q (id %q) has no label for it", c.Attr["name"], id)
		}
	}
	doc.control(t, "/a~1b")
	doc.control(t, "/a~0b")
	doc.control(t, "/a/b")
}

func TestRenderErrorPlacement(t *testing.T) {
	t.Parallel()
	errs := map[string]string{
		"":                   "missing property 'customer'",
		"/items/1/qty":       "must be > 0",
		"/items/0":           "bad line",
		"/customer/email":    "not an email",
		"/items":             "too many",
		"/items/7/sku":       "no such row",
		"/nope":              "additional property",
		"/items/0/tags/0/zz": "deep",
	}
	doc := render(t, nested, "", errs)

	for _, tt := range []struct{ id, msg string }{
		{"sf.items.1.qty", "must be > 0"},
		{"sf.customer.email", "not an email"},
		{"sf.items.0", "bad line"},
		{"sf.items", "too many"},
	} {
		e := doc.byID(t, tt.id)
		slot := doc.byID(t, tt.id+"__err")
		if slot.Text != tt.msg || slot.Attr["role"] != "alert" || slot.has("hidden") {
			t.Errorf("%s: message %q, attrs %v", tt.id, slot.Text, slot.Attr)
		}
		if e.Attr["aria-invalid"] != "true" || !strings.Contains(e.Attr["aria-describedby"], tt.id+"__err") {
			t.Errorf("%s: attrs %v", tt.id, e.Attr)
		}
	}
	if q := doc.control(t, "/items/0/qty"); q.has("aria-invalid") {
		t.Error("error leaked to another row")
	}
	top := doc.byID(t, "sf__errors")
	if top.Attr["role"] != "alert" {
		t.Error("top errors role")
	}
	var items []string
	for _, li := range top.all(func(e *elem) bool { return e.Tag == "li" }) {
		items = append(items, li.Text)
	}
	want := []string{"missing property 'customer'", "/items/0/tags/0/zz: deep", "/items/7/sku: no such row", "/nope: additional property"}
	if strings.Join(items, "|") != strings.Join(want, "|") {
		t.Errorf("top = %q, want %q", items, want)
	}
	if len(doc.all(func(e *elem) bool { return e.inTemplate() && e.has("aria-invalid") })) != 0 {
		t.Error("row template took an error")
	}
}

func TestRenderEscapes(t *testing.T) {
	t.Parallel()
	hostile := `<script>alert(1)</script>"'&`
	h, _ := json.Marshal(hostile)
	schema := obj(`"x":{"type":"string","title":` + string(h) + `,"description":` + string(h) + `,"default":` + string(h) + `,"pattern":` + string(h) + `},
		"e":{"enum":[` + string(h) + `],"title":"e"},
		` + string(h) + `:{"type":"string"}`)
	out, err := Render(schema, nil, map[string]string{"/x": hostile, "": hostile})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.ToLower(string(out)), "<script") {
		t.Fatalf("unescaped script in output:\n%s", out)
	}
	doc := parseHTML(t, out)
	x := doc.control(t, "/x")
	if x.Attr["value"] != hostile || x.Attr["data-sf-pattern"] != hostile {
		t.Errorf("value = %q", x.Attr["value"])
	}
	if got := doc.byID(t, "sf.x__help").Text; got != hostile {
		t.Errorf("help = %q", got)
	}
	if got := doc.byID(t, "sf.x__err").Text; got != hostile {
		t.Errorf("error = %q", got)
	}
	opt := doc.control(t, "/e").all(func(e *elem) bool { return e.Tag == "option" })[1]
	if opt.Text != hostile || opt.Attr["value"] != string(h) {
		t.Errorf("option = %q %q", opt.Text, opt.Attr["value"])
	}
	doc.control(t, child("", hostile))
}

func TestRenderUnsupported(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, schema, pointer string
	}{
		{"empty", ``, ""},
		{"root not object", `{"type":"string"}`, ""},
		{"no type", `{"type":"object","properties":{"x":{}}}`, "/properties/x"},
		{"true schema", `{"type":"object","properties":{"x":true}}`, "/properties/x"},
		{"oneOf", `{"type":"object","properties":{"x":{"oneOf":[{"type":"string"}]}}}`, "/properties/x/oneOf"},
		{"anyOf", `{"type":"object","properties":{"x":{"type":"string","anyOf":[]}}}`, "/properties/x/anyOf"},
		{"external ref", `{"type":"object","properties":{"x":{"$ref":"other.json#/a"}}}`, "/properties/x/$ref"},
		{"missing ref", `{"type":"object","properties":{"x":{"$ref":"#/$defs/none"}}}`, "/properties/x/$ref"},
		{"recursive ref", `{"type":"object","properties":{"x":{"$ref":"#"}}}`, "/properties/x/$ref"},
		{"map", `{"type":"object","additionalProperties":{"type":"string"}}`, "/additionalProperties"},
		{"two types", `{"type":"object","properties":{"x":{"type":["string","number"]}}}`, "/properties/x/type"},
		{"array no items", `{"type":"object","properties":{"x":{"type":"array"}}}`, "/properties/x"},
		{"nested deep", `{"type":"object","properties":{"x":{"type":"array","items":{"type":"array","items":{"oneOf":[]}}}}}`, "/properties/x/items/items/oneOf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Render(json.RawMessage(tt.schema), nil, nil)
			var ue *UnsupportedError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v, want *UnsupportedError", err)
			}
			if ue.Pointer != tt.pointer {
				t.Errorf("pointer = %q, want %q (%v)", ue.Pointer, tt.pointer, err)
			}
			if _, err := Parse(json.RawMessage(tt.schema), nil); !errors.As(err, &ue) {
				t.Errorf("Parse err = %v, want *UnsupportedError", err)
			}
		})
	}
}

func TestRenderBadJSON(t *testing.T) {
	t.Parallel()
	var ue *UnsupportedError
	if _, err := Render(json.RawMessage(`{`), nil, nil); err == nil || errors.As(err, &ue) {
		t.Errorf("bad schema: err = %v", err)
	}
	if _, err := Render(obj(`"x":{"type":"string"}`), json.RawMessage(`{"x":`), nil); err == nil {
		t.Error("bad values: no error")
	}
}

// TestRenderExamples renders every input schema of examples/hello.
func TestRenderExamples(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../examples/hello/schemas/*.input.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example schemas: %v", err)
	}
	for _, f := range files {
		schema, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Render(schema, nil, nil); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestRenderBounded checks the limits that keep a hostile schema or a
// huge value from building an unbounded form.
func TestRenderBounded(t *testing.T) {
	t.Parallel()
	// Each level uses the one below ten times: 10^5 fields once expanded.
	defs := `"l0":{"type":"string"}`
	for i := 1; i <= 5; i++ {
		var props []string
		for j := 0; j < 10; j++ {
			props = append(props, fmt.Sprintf(`"p%d":{"$ref":"#/$defs/l%d"}`, j, i-1))
		}
		defs += fmt.Sprintf(`,"l%d":{"type":"object","properties":{%s}}`, i, strings.Join(props, ","))
	}
	bomb := json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"#/$defs/l5"}},"$defs":{` + defs + `}}`)
	var ue *UnsupportedError
	if _, err := Render(bomb, nil, nil); !errors.As(err, &ue) {
		t.Errorf("ref bomb: err = %v", err)
	}

	long := obj(`"tags":{"type":"array","items":{"type":"string"}}`)
	values := `{"tags":[` + strings.Repeat(`"a",`, maxFields) + `"a"]}`
	if _, err := Render(long, json.RawMessage(values), nil); !errors.As(err, &ue) {
		t.Errorf("long array: err = %v", err)
	}
	if _, err := Render(long, json.RawMessage(`{"tags":["a","b"]}`), nil); err != nil {
		t.Errorf("short array: %v", err)
	}
}
