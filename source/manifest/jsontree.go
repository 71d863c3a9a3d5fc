package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// jnode is one JSON value that keeps its object members in the order they
// were written, so a bundled schema shows its properties (and the
// console's form its fields) in the author's order.
type jnode struct {
	// kind is '{' for an object, '[' for an array, 0 for a scalar.
	kind    byte
	members []jmember
	items   []*jnode
	// scalar is a string, json.Number, bool or nil.
	scalar any
}

type jmember struct {
	key string
	val *jnode
}

// maxDepth bounds the nesting of a schema file. Real schemas nest a few
// dozen levels; without a bound a 1 MiB file of "[[[[…" would recurse half
// a million deep here and in the walk over the tree (whose pointer strings
// grow with the depth: quadratic work in the server's sync).
const maxDepth = 512

// parseJSON reads one JSON document; trailing data is an error.
func parseJSON(data []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the JSON value")
	}
	return n, nil
}

func parseValue(dec *json.Decoder, depth int) (*jnode, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested more than %d levels deep", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		n := &jnode{kind: '{'}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, ok := kt.(string)
			if !ok {
				return nil, fmt.Errorf("object key %v is not a string", kt)
			}
			v, err := parseValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			n.members = append(n.members, jmember{key: key, val: v})
		}
		if _, err := dec.Token(); err != nil { // '}'
			return nil, err
		}
		return n, nil
	case json.Delim('['):
		n := &jnode{kind: '['}
		for dec.More() {
			v, err := parseValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, v)
		}
		if _, err := dec.Token(); err != nil { // ']'
			return nil, err
		}
		return n, nil
	case json.Delim('}'), json.Delim(']'):
		return nil, fmt.Errorf("unexpected %v", tok)
	}
	return &jnode{scalar: tok}, nil
}

// get is the value of the last member named key (as a JSON parser keeps
// the last of repeated names), nil when there is none or n is no object.
func (n *jnode) get(key string) *jnode {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return n.members[i].val
		}
	}
	return nil
}

// str is the string value of n, if it is one.
func (n *jnode) str() (string, bool) {
	if n == nil || n.kind != 0 {
		return "", false
	}
	s, ok := n.scalar.(string)
	return s, ok
}

// remove drops every member named key.
func (n *jnode) remove(key string) {
	kept := n.members[:0]
	for _, m := range n.members {
		if m.key != key {
			kept = append(kept, m)
		}
	}
	n.members = kept
}

// encode writes n as compact JSON.
func (n *jnode) encode(buf *bytes.Buffer) error {
	switch n.kind {
	case '{':
		buf.WriteByte('{')
		for i, m := range n.members {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := encodeScalar(buf, m.key); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := m.val.encode(buf); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case '[':
		buf.WriteByte('[')
		for i, it := range n.items {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := it.encode(buf); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	default:
		return encodeScalar(buf, n.scalar)
	}
	return nil
}

// encodeScalar writes a string, number, bool or null as json.Compact
// would leave it (no HTML escaping).
func encodeScalar(buf *bytes.Buffer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode %v: %w", v, err)
	}
	buf.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return nil
}
