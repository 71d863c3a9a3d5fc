package schemaform

import (
	"encoding/xml"
	"errors"
	"html/template"
	"io"
	"net/url"
	"strings"
	"testing"
)

// elem is a parsed HTML element; enough DOM for the tests, read with
// encoding/xml in its HTML mode (golang.org/x/net/html is not a module
// dependency).
type elem struct {
	Tag      string
	Attr     map[string]string
	Children []*elem
	Text     string // all text inside, concatenated
	Parent   *elem
}

func (e *elem) has(a string) bool { _, ok := e.Attr[a]; return ok }

// parseHTML parses a Render fragment and fails the test on bad markup.
func parseHTML(t testing.TB, h template.HTML) *elem {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader("<root>" + string(h) + "</root>"))
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	root := &elem{Tag: "#doc", Attr: map[string]string{}}
	cur := root
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("parse HTML: %v\n%s", err, h)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			e := &elem{Tag: tk.Name.Local, Attr: map[string]string{}, Parent: cur}
			for _, a := range tk.Attr {
				e.Attr[a.Name.Local] = a.Value
			}
			cur.Children = append(cur.Children, e)
			cur = e
		case xml.EndElement:
			if cur.Parent == nil {
				t.Fatalf("unbalanced </%s>", tk.Name.Local)
			}
			cur = cur.Parent
		case xml.CharData:
			for e := cur; e != nil; e = e.Parent {
				e.Text += string(tk)
			}
		}
	}
	return root
}

// all is every element under e (not e) that match accepts, in order.
func (e *elem) all(match func(*elem) bool) []*elem {
	var out []*elem
	for _, c := range e.Children {
		if match(c) {
			out = append(out, c)
		}
		out = append(out, c.all(match)...)
	}
	return out
}

// byID is the one element with that id, or a test failure.
func (e *elem) byID(t testing.TB, id string) *elem {
	t.Helper()
	got := e.all(func(x *elem) bool { return x.Attr["id"] == id })
	if len(got) != 1 {
		t.Fatalf("%d elements with id %q", len(got), id)
	}
	return got[0]
}

// control is the one input/select/textarea with that name that is not
// a hidden input, or a test failure.
func (e *elem) control(t testing.TB, name string) *elem {
	t.Helper()
	got := e.all(func(x *elem) bool {
		return x.Attr["name"] == name && x.Attr["type"] != "hidden" && isControl(x)
	})
	if len(got) != 1 {
		t.Fatalf("%d controls named %q", len(got), name)
	}
	return got[0]
}

func isControl(x *elem) bool {
	return x.Tag == "input" || x.Tag == "select" || x.Tag == "textarea"
}

// inTemplate tells whether e is row template content (never posted).
func (e *elem) inTemplate() bool {
	for p := e.Parent; p != nil; p = p.Parent {
		if p.Tag == "template" {
			return true
		}
	}
	return false
}

// post is what a browser submits for the form as rendered: the
// successful controls outside row templates, with the raw pane left out
// (schemaform.js disables it unless raw mode is on).
func post(root *elem) url.Values {
	form := url.Values{}
	for _, c := range root.all(isControl) {
		name := c.Attr["name"]
		if name == "" || c.inTemplate() || name == RawField || name == RawModeField {
			continue
		}
		switch {
		case c.Tag == "select":
			opts := c.all(func(x *elem) bool { return x.Tag == "option" })
			pick := opts[0] // a browser selects the first option by default
			for _, o := range opts {
				if o.has("selected") {
					pick = o
				}
			}
			form.Add(name, pick.Attr["value"])
		case c.Tag == "textarea":
			form.Add(name, c.Text)
		case c.Attr["type"] == "checkbox":
			if c.has("checked") {
				form.Add(name, c.Attr["value"])
			}
		default:
			form.Add(name, c.Attr["value"])
		}
	}
	return form
}
