package schemaform

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"sort"
)

//go:embed form.tmpl
var templateFS embed.FS

// tmpl is parsed once; html/template escapes every value it writes.
var tmpl = template.Must(template.New("").ParseFS(templateFS, "form.tmpl"))

// page is what the "form" template writes.
type page struct {
	TopErrors []string
	Fields    []*field
	Raw       string
}

// Render writes the run form fields for schema, an action's input schema:
// a fieldset of labelled controls named by JSON pointer, then a raw JSON
// pane (a textarea named RawField and a checkbox named RawModeField). The
// caller writes the surrounding <form>, its CSRF field and submit button,
// and includes schemaform.js.
//
// values prefills the fields (the input of an earlier run, or what Parse
// returned for a refused post); when it is empty the schema's defaults
// are used. errs maps JSON pointers (as in a 422 body, or Errors of a
// Parse error) to messages shown next to the field with that name; the
// message for "" and any whose field is not on the form are shown at the
// top.
//
// A schema the form cannot express gives an *UnsupportedError; invalid
// JSON in schema or values gives a plain error.
func Render(schema json.RawMessage, values json.RawMessage, errs map[string]string) (template.HTML, error) {
	root, err := load(schema)
	if err != nil {
		return "", err
	}
	raw, err := rawJSON(root, values)
	if err != nil {
		return "", err
	}
	doc, err := decode(raw)
	if err != nil {
		return "", fmt.Errorf("schemaform: read values: %w", err)
	}
	b := &builder{errs: make(map[string]string, len(errs))}
	for k, v := range errs {
		b.errs[k] = v
	}
	top, err := b.build(root, doc)
	if err != nil {
		return "", err
	}
	if top.Err != "" { // the root has no field of its own
		b.errs[""] = top.Err
	}
	p := page{Fields: top.Children, TopErrors: leftover(b.errs), Raw: string(raw)}
	var buf bytes.Buffer
	if err := tmpl.ExecuteTemplate(&buf, "form", p); err != nil {
		return "", fmt.Errorf("schemaform: write form: %w", err)
	}
	return template.HTML(buf.String()), nil // written by html/template, so escaped
}

// build builds the root field, turning the builder's too-many-fields
// stop into an error.
func (b *builder) build(root *node, doc any) (top *field, err error) {
	defer func() {
		if r := recover(); r != nil {
			if r != errTooMany {
				panic(r)
			}
			err = errTooMany
		}
	}()
	return b.fieldFor(root, "", "", true, doc, true), nil
}

// rawJSON is the indented JSON shown in the raw pane: values when given,
// else the defaults, else {}.
func rawJSON(root *node, values json.RawMessage) ([]byte, error) {
	src := bytes.TrimSpace(values)
	if len(src) == 0 || bytes.Equal(src, []byte("null")) {
		d, ok := defaults(root)
		if !ok {
			return []byte("{}"), nil
		}
		var err error
		if src, err = json.Marshal(d); err != nil {
			return nil, fmt.Errorf("schemaform: write defaults: %w", err)
		}
	}
	var out bytes.Buffer
	if err := json.Indent(&out, src, "", "  "); err != nil {
		return nil, fmt.Errorf("schemaform: read values: %w", err)
	}
	return out.Bytes(), nil
}

// leftover lists the errors no field took for the top of the form: the
// root's first as it is, then the others by pointer, each prefixed with
// its pointer so the reader knows what it is about.
func leftover(errs map[string]string) []string {
	ptrs := make([]string, 0, len(errs))
	for p := range errs {
		ptrs = append(ptrs, p)
	}
	sort.Strings(ptrs)
	out := make([]string, 0, len(ptrs))
	for _, p := range ptrs {
		if p == "" {
			out = append(out, errs[p])
			continue
		}
		out = append(out, p+": "+errs[p])
	}
	return out
}
