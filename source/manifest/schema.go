package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// Limits on schema files and on the bundle one action's schema becomes.
const (
	// MaxSchemaFile is the largest schema file, the one the manifest names
	// or one it refers to, in bytes (1 MiB).
	MaxSchemaFile = 1 << 20
	// MaxSchemaBundle is the largest bundled schema (a file with every file
	// it refers to inlined), in bytes (4 MiB); it is pinned into the jobs.
	MaxSchemaBundle = 4 << 20
)

// schema reads a schema file, bundles the files of the tree it refers to
// into it and compiles the result; nil when none is named or on a problem
// (added to ps).
func schema(p, field string, tree Tree, ps *problems) json.RawMessage {
	if p == "" {
		return nil
	}
	clean, ok := cleanRelPath(p)
	if !ok {
		ps.add(FileName, field, "%q is not a relative path inside the repository", p)
		return nil
	}
	f, ok := tree.regular(clean)
	if !ok {
		ps.add(FileName, field, "schema file %s does not exist in the commit", clean)
		return nil
	}
	b := &bundler{tree: tree, root: clean, field: field, ps: ps, keys: map[string]string{}, docs: map[string]*jnode{}}
	root, ok := b.load(clean)
	if !ok {
		return nil
	}
	b.walk(clean, root, "", false)
	if b.failed {
		return nil
	}
	var buf bytes.Buffer
	if len(b.order) == 0 {
		// No other file: stored as written, compacted.
		if err := json.Compact(&buf, f.Data); err != nil {
			ps.add(clean, "", "not valid JSON: %v (named by %s)", err, field)
			return nil
		}
	} else if !b.assemble(root) {
		return nil
	} else if err := root.encode(&buf); err != nil {
		ps.add(clean, "", "bundle the schema: %v (named by %s)", err, field)
		return nil
	}
	if buf.Len() > MaxSchemaBundle {
		ps.add(clean, "", "the schema with the files it refers to is %d bytes; a bundled schema is at most %d (named by %s)", buf.Len(), MaxSchemaBundle, field)
		return nil
	}
	if _, err := catalog.CompileSchema(buf.Bytes()); err != nil {
		ps.add(clean, "", "%v (named by %s)", err, field)
		return nil
	}
	return json.RawMessage(buf.Bytes())
}

// bundler inlines the files one schema file refers to into it: each
// referenced file goes under the root's $defs (definitions before draft
// 2019-09), keyed by its path, and every $ref to it becomes a pointer into
// the root, so the stored schema never names another file.
type bundler struct {
	tree  Tree
	root  string // the schema file the manifest names
	field string // the manifest field naming it, for messages
	ps    *problems
	// docs are the parsed files by tree path, the root included; keys
	// their $defs names ("" for the root), order the referenced files in
	// the order they were met.
	docs   map[string]*jnode
	keys   map[string]string
	order  []string
	size   int
	failed bool
	// nestedIDs are the $ids met below the top of a file, where they
	// would change the base that references resolve against.
	nestedIDs []string
}

// problem records one problem with file p.
func (b *bundler) problem(p, format string, args ...any) {
	b.failed = true
	b.ps.add(p, "", "%s (named by %s)", fmt.Sprintf(format, args...), b.field)
}

// load reads, checks and parses the schema file at tree path p.
func (b *bundler) load(p string) (*jnode, bool) {
	f, ok := b.tree.regular(p)
	if !ok {
		return nil, false
	}
	if len(f.Data) > MaxSchemaFile {
		b.problem(p, "the schema file is %d bytes; a schema file is at most %d (1 MiB)", len(f.Data), MaxSchemaFile)
		return nil, false
	}
	if b.size += len(f.Data); b.size > MaxSchemaBundle {
		b.problem(p, "the schema files %s refers to add up to more than %d bytes (4 MiB)", b.root, MaxSchemaBundle)
		return nil, false
	}
	n, err := parseJSON(f.Data)
	if err != nil {
		b.problem(p, "not valid JSON: %v", err)
		return nil, false
	}
	// Pinned into every job: text only one database could store (NUL, a
	// lone surrogate escape) is refused here, the same on both.
	if err := spine.CheckText("the schema", f.Data); err != nil {
		b.problem(p, "%s", strings.TrimPrefix(err.Error(), spine.ErrInvalid.Error()+": "))
		return nil, false
	}
	b.docs[p] = n
	return n, true
}

// Keywords whose values are data, not schemas: a "$ref" inside them is no
// reference.
var dataKeywords = map[string]bool{"const": true, "enum": true, "default": true, "examples": true}

// Keywords whose values map names to schemas: their members are names,
// not keywords.
var schemaMaps = map[string]bool{
	"properties": true, "patternProperties": true, "$defs": true, "definitions": true,
	"dependentSchemas": true, "dependencies": true,
}

// Keywords that only mean something in the resource they are written in;
// a file that is inlined into another cannot keep them.
var resourceKeywords = []string{"$anchor", "$dynamicAnchor", "$recursiveAnchor"}

// walk visits the schema n of file p at JSON pointer ptr, resolving and
// rewriting its references; inMap says n maps names to schemas.
func (b *bundler) walk(p string, n *jnode, ptr string, inMap bool) {
	switch n.kind {
	case '[':
		for i, it := range n.items {
			b.walk(p, it, fmt.Sprintf("%s/%d", ptr, i), false)
		}
		return
	case 0:
		return
	}
	if inMap {
		for _, m := range n.members {
			b.walk(p, m.val, ptr+"/"+escapeToken(m.key), false)
		}
		return
	}
	for i := range n.members {
		m := &n.members[i]
		at := ptr + "/" + escapeToken(m.key)
		switch {
		case dataKeywords[m.key]:
			continue
		case m.key == "$ref" || m.key == "$dynamicRef" || m.key == "$recursiveRef":
			if s, ok := m.val.str(); ok {
				b.ref(p, m.key, s, m.val, at)
			}
			continue
		case m.key == "$id" && ptr != "":
			b.nestedIDs = append(b.nestedIDs, p+" at "+at)
		}
		b.walk(p, m.val, at, schemaMaps[m.key])
	}
}

// ref resolves the reference s, written as keyword kw at pointer at of
// file p, and rewrites val to its place in the bundle when it names
// another file or is written in an inlined one.
func (b *bundler) ref(p, kw, s string, val *jnode, at string) {
	u, err := url.Parse(s)
	if err != nil {
		b.problem(p, "%s %q at %s is not a valid URI reference", kw, s, at)
		return
	}
	switch {
	case u.Scheme == "http" || u.Scheme == "https":
		b.problem(p, "%s %q at %s names the network; a schema may only refer to files of the same commit, by relative path", kw, s, at)
		return
	case u.Scheme != "" || u.Host != "" || u.Opaque != "":
		b.problem(p, "%s %q at %s is not a relative path; a schema may only refer to files of the same commit, by relative path", kw, s, at)
		return
	case u.RawQuery != "" || u.ForceQuery:
		b.problem(p, "%s %q at %s has a query; a schema may only refer to files of the same commit, by relative path", kw, s, at)
		return
	}
	if u.Path == "" { // a fragment of the same file
		if p == b.root {
			return
		}
		b.rewrite(p, kw, s, val, at, p, u.Fragment)
		return
	}
	if kw != "$ref" {
		b.problem(p, "%s %q at %s names another file; only $ref may", kw, s, at)
		return
	}
	target, ok := b.resolve(p, s, u.Path, at)
	if !ok {
		return
	}
	if _, seen := b.docs[target]; !seen {
		d, ok := b.load(target)
		if !ok {
			return
		}
		b.keys[target] = target
		b.order = append(b.order, target)
		b.walk(target, d, "", false)
	}
	b.rewrite(p, kw, s, val, at, target, u.Fragment)
}

// resolve turns the path of reference s, written in file p, into the
// tree path of the file it names: relative to p's directory, never above
// the root (the rule the tree's symbolic links follow), to a regular file
// of the commit.
func (b *bundler) resolve(p, s, refPath, at string) (string, bool) {
	if strings.HasPrefix(refPath, "/") {
		b.problem(p, "$ref %q at %s is an absolute path; write it relative to %s", s, at, p)
		return "", false
	}
	if strings.Contains(refPath, "\\") {
		b.problem(p, "$ref %q at %s has a backslash; paths use /", s, at)
		return "", false
	}
	cur := parent(p)
	for _, name := range strings.Split(refPath, "/") {
		switch name {
		case "", ".":
		case "..":
			if cur == "" {
				b.problem(p, "$ref %q at %s leads outside the repository; a schema may only refer to files of the same commit", s, at)
				return "", false
			}
			cur = parent(cur)
		default:
			cur = child(cur, name)
		}
	}
	if _, ok := b.tree.regular(cur); !ok {
		b.problem(p, "$ref %q at %s names %s, which is not a file of the commit", s, at, cur)
		return "", false
	}
	return cur, true
}

// rewrite points val at fragment frag of file target, inside the bundle.
func (b *bundler) rewrite(p, kw, s string, val *jnode, at, target, frag string) {
	if kw != "$ref" {
		b.problem(p, "%s %q at %s is written in a file that another schema refers to; only $ref can be inlined", kw, s, at)
		return
	}
	if target == b.root {
		val.scalar = (&url.URL{Fragment: frag}).String()
		if frag == "" {
			val.scalar = "#"
		}
		return
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		b.problem(p, "$ref %q at %s uses the name %q; refer into another file with a JSON pointer (such as %s#/$defs/name)", s, at, frag, target)
		return
	}
	val.scalar = (&url.URL{Fragment: "/" + b.defsKeyword() + "/" + escapeToken(b.keys[target]) + frag}).String()
}

// defsKeyword is where the referenced files go in the root: $defs, or
// definitions for a root written for draft 7 or earlier.
func (b *bundler) defsKeyword() string {
	s, _ := b.docs[b.root].get("$schema").str()
	for _, old := range []string{"draft-03", "draft-04", "draft-05", "draft-06", "draft-07"} {
		if strings.Contains(s, old) {
			return "definitions"
		}
	}
	return "$defs"
}

// assemble adds the referenced files to the root's definitions, each
// without the keywords that named it as a resource of its own.
func (b *bundler) assemble(root *jnode) bool {
	if root.kind != '{' {
		b.problem(b.root, "a schema that refers to other files must be an object")
		return false
	}
	for _, id := range b.nestedIDs {
		b.problem(b.root, "$id inside a schema (%s) changes where references resolve; a schema that refers to other files may have $id only at the top of a file", id)
	}
	rootDialect := dialect(root)
	kw := b.defsKeyword()
	defs := root.get(kw)
	if defs == nil {
		defs = &jnode{kind: '{'}
		root.members = append(root.members, jmember{key: kw, val: defs})
	} else if defs.kind != '{' {
		b.problem(b.root, "%s is not an object, so the files it refers to cannot be added to it", kw)
		return false
	}
	for _, p := range b.order {
		d := b.docs[p]
		if d.kind == '{' {
			for _, k := range resourceKeywords {
				if hasKeyword(d, k) {
					b.problem(p, "%s cannot be used in a file that another schema refers to (the file is inlined into %s)", k, b.root)
				}
			}
			if d.get("$schema") != nil && dialect(d) != rootDialect {
				b.problem(p, "$schema %q differs from %s's %q; files bundled into one schema share its dialect", dialect(d), b.root, rootDialect)
			}
			d.remove("$schema")
			d.remove("$id")
		}
		if defs.get(b.keys[p]) != nil {
			b.problem(b.root, "%s already has an entry %q, where the file %s would be inlined", kw, b.keys[p], p)
		}
		defs.members = append(defs.members, jmember{key: b.keys[p], val: d})
	}
	return !b.failed
}

// defaultDialect is the dialect of a schema that names none.
const defaultDialect = "https://json-schema.org/draft/2020-12/schema"

// dialect is the $schema a schema document is written in, without the
// empty fragment some spell it with.
func dialect(doc *jnode) string {
	s, _ := doc.get("$schema").str()
	if s = strings.TrimSuffix(s, "#"); s == "" {
		return defaultDialect
	}
	return s
}

// hasKeyword reports whether keyword k appears anywhere in schema n (in a
// schema position).
func hasKeyword(n *jnode, k string) bool {
	return findKeyword(n, k, false)
}

func findKeyword(n *jnode, k string, inMap bool) bool {
	switch n.kind {
	case '[':
		for _, it := range n.items {
			if findKeyword(it, k, false) {
				return true
			}
		}
	case '{':
		for _, m := range n.members {
			if !inMap && m.key == k {
				return true
			}
			if !inMap && dataKeywords[m.key] {
				continue
			}
			if findKeyword(m.val, k, !inMap && schemaMaps[m.key]) {
				return true
			}
		}
	}
	return false
}

// escapeToken escapes one JSON pointer token.
func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
