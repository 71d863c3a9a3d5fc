package manifest_test

import (
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/source/manifest"
)

const schemaYAML = "apps:\n  hello:\n    entrypoint: src/main.ts\n    runtime: bun\n    actions:\n" +
	"      greet:\n        input_schema: schemas/in.json\n"

// schemaTree is a source whose action greet takes schemas/in.json, with
// files added beside it.
func schemaTree(files map[string]string, extra ...objectcache.File) []objectcache.File {
	tree := []objectcache.File{file("windforce.yaml", schemaYAML), file("src/main.ts", "export async function main() {}")}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		tree = append(tree, file(p, files[p]))
	}
	return append(tree, extra...)
}

// loadInputSchema loads the tree and returns greet's stored input schema.
func loadInputSchema(t *testing.T, tree []objectcache.File) json.RawMessage {
	t.Helper()
	apps, err := manifest.Load(tree)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return apps[0].Actions[0].InputSchema
}

// requireValid checks the stored schema accepts good and refuses bad,
// compiled alone as enqueue compiles it (no file beside it).
func requireValid(t *testing.T, schema json.RawMessage, good string, bad ...string) {
	t.Helper()
	if err := catalog.ValidateInput(schema, json.RawMessage(good)); err != nil {
		t.Fatalf("input %s refused by %s: %v", good, schema, err)
	}
	for _, b := range bad {
		if err := catalog.ValidateInput(schema, json.RawMessage(b)); !errors.Is(err, catalog.ErrInvalidInput) {
			t.Fatalf("input %s accepted by %s (err %v); want ErrInvalidInput", b, schema, err)
		}
	}
}

// TestSchemaRefToFile: a $ref to another file of the commit is inlined
// under $defs, keyed by the file's path, and the ref points there.
func TestSchemaRefToFile(t *testing.T) {
	t.Parallel()
	s := loadInputSchema(t, schemaTree(map[string]string{
		"schemas/in.json":     `{"type": "object", "properties": {"name": {"type": "string"}, "who": {"$ref": "common.json"}}, "required": ["who"]}`,
		"schemas/common.json": `{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "common", "type": "string", "minLength": 3}`,
	}))
	want := `{"type":"object","properties":{"name":{"type":"string"},"who":{"$ref":"#/$defs/schemas~1common.json"}},"required":["who"],` +
		`"$defs":{"schemas/common.json":{"type":"string","minLength":3}}}`
	if string(s) != want {
		t.Fatalf("bundle =\n%s\nwant\n%s", s, want)
	}
	requireValid(t, s, `{"who":"Ada"}`, `{"who":"A"}`, `{"who":3}`, `{}`)
}

// TestSchemaRefFragment: a fragment reaches into the other file, and the
// root's own $defs stay beside the inlined file.
func TestSchemaRefFragment(t *testing.T) {
	t.Parallel()
	s := loadInputSchema(t, schemaTree(map[string]string{
		"schemas/in.json": `{"type": "object", "properties": {"email": {"$ref": "common.json#/$defs/email"}, "n": {"$ref": "#/$defs/n"}},` +
			` "$defs": {"n": {"type": "integer"}}}`,
		"schemas/common.json": `{"$defs": {"email": {"type": "string", "pattern": "^[^@]+@[^@]+$"}, "unused": {"type": "null"}}}`,
	}))
	if !strings.Contains(string(s), `"$ref":"#/$defs/schemas~1common.json/$defs/email"`) || !strings.Contains(string(s), `"$ref":"#/$defs/n"`) {
		t.Fatalf("refs not rewritten: %s", s)
	}
	requireValid(t, s, `{"email":"ada@example.com","n":1}`, `{"email":"ada"}`, `{"n":1.5}`)
}

// TestSchemaNestedRefs: a referenced file's own refs resolve against its
// directory, its local refs point into its inlined copy, and a link inside
// the tree may be walked through.
func TestSchemaNestedRefs(t *testing.T) {
	t.Parallel()
	s := loadInputSchema(t, schemaTree(map[string]string{
		"schemas/in.json":            `{"type": "object", "properties": {"person": {"$ref": "defs/person.json"}, "tags": {"$ref": "lib/tags.json"}}}`,
		"schemas/defs/person.json":   `{"type": "object", "properties": {"email": {"$ref": "../common.json#/$defs/email"}, "age": {"$ref": "#/$defs/age"}}, "$defs": {"age": {"type": "integer", "minimum": 0}}}`,
		"schemas/common.json":        `{"$defs": {"email": {"type": "string", "pattern": "@"}}}`,
		"shared/tags.json":           `{"type": "array", "items": {"type": "string"}}`,
		"schemas/defs/unrelated.txt": "not json",
	}, link("schemas/lib", "../shared")))
	for _, key := range []string{`"schemas/defs/person.json":`, `"schemas/common.json":`, `"schemas/lib/tags.json":`,
		`"$ref":"#/$defs/schemas~1defs~1person.json/$defs/age"`} {
		if !strings.Contains(string(s), key) {
			t.Fatalf("bundle lacks %s: %s", key, s)
		}
	}
	requireValid(t, s, `{"person":{"email":"a@b","age":3},"tags":["x"]}`,
		`{"person":{"email":"ab"}}`, `{"person":{"age":-1}}`, `{"tags":[1]}`)
}

// TestSchemaRefCycles: files that refer to each other, and back to the
// schema the manifest names, are each inlined once; the recursive schema
// they make validates nested data.
func TestSchemaRefCycles(t *testing.T) {
	t.Parallel()
	s := loadInputSchema(t, schemaTree(map[string]string{
		"schemas/in.json":   `{"type": "object", "properties": {"tree": {"$ref": "node.json"}, "again": {"$ref": "in.json"}}}`,
		"schemas/node.json": `{"type": "object", "properties": {"value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "node.json"}}, "leaf": {"$ref": "leaf.json"}}}`,
		"schemas/leaf.json": `{"properties": {"up": {"$ref": "node.json#/properties/value"}, "root": {"$ref": "in.json#"}}}`,
	}))
	if n := strings.Count(string(s), `"schemas/node.json":`); n != 1 {
		t.Fatalf("node.json inlined %d times: %s", n, s)
	}
	if !strings.Contains(string(s), `"again":{"$ref":"#"}`) || !strings.Contains(string(s), `"root":{"$ref":"#"}`) {
		t.Fatalf("refs to the root not rewritten to #: %s", s)
	}
	requireValid(t, s, `{"tree":{"value":1,"children":[{"value":2,"children":[{"value":3}]}],"leaf":{"up":4}},"again":{"tree":{"value":5}}}`,
		`{"tree":{"children":[{"children":[{"value":"deep"}]}]}}`, `{"tree":{"leaf":{"up":"x"}}}`, `{"again":{"tree":{"value":"x"}}}`)
}

// TestSchemaKeepsOrderAndDialect: the bundle keeps the author's order of
// properties; a draft-07 root gets its files under definitions; a
// property named like a data keyword is still a schema.
func TestSchemaKeepsOrderAndDialect(t *testing.T) {
	t.Parallel()
	s := loadInputSchema(t, schemaTree(map[string]string{
		"schemas/in.json": `{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", ` +
			`"properties": {"zeta": {"type": "string"}, "default": {"$ref": "common.json#/definitions/n"}, "alpha": {"const": {"$ref": "not-a-file.json"}}}}`,
		"schemas/common.json": `{"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"n": {"type": "number"}}}`,
	}))
	want := `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"zeta":{"type":"string"},` +
		`"default":{"$ref":"#/definitions/schemas~1common.json/definitions/n"},"alpha":{"const":{"$ref":"not-a-file.json"}}},` +
		`"definitions":{"schemas/common.json":{"definitions":{"n":{"type":"number"}}}}}`
	if string(s) != want {
		t.Fatalf("bundle =\n%s\nwant\n%s", s, want)
	}
	requireValid(t, s, `{"zeta":"z","default":1,"alpha":{"$ref":"not-a-file.json"}}`, `{"default":"x"}`, `{"alpha":1}`)
}

// TestSchemaRefRefused: each bad reference is refused with a message
// naming the file that holds it, the ref, where it is, and the manifest
// field that led there.
func TestSchemaRefRefused(t *testing.T) {
	t.Parallel()
	in := func(ref string) string { return `{"properties": {"a": {"$ref": "` + ref + `"}}}` }
	big := `{"description": "` + strings.Repeat("x", manifest.MaxSchemaFile) + `"}`
	cases := []struct {
		name  string
		files map[string]string
		extra []objectcache.File
		want  string
	}{
		{"up out of the tree", map[string]string{"schemas/in.json": in("../../etc/passwd.json")},
			nil, `schemas/in.json: $ref "../../etc/passwd.json" at /properties/a/$ref leads outside the repository`},
		{"up and back in", map[string]string{"schemas/in.json": in("../../windforce/schemas/c.json"), "schemas/c.json": "{}"},
			nil, `leads outside the repository`},
		{"up out from a nested file", map[string]string{"schemas/in.json": in("c.json"), "schemas/c.json": `{"$ref": "../../x.json"}`},
			nil, `schemas/c.json: $ref "../../x.json" at /$ref leads outside the repository`},
		{"absolute path", map[string]string{"schemas/in.json": in("/etc/passwd")},
			nil, `schemas/in.json: $ref "/etc/passwd" at /properties/a/$ref is an absolute path`},
		{"http", map[string]string{"schemas/in.json": in("http://example.com/c.json")},
			nil, `schemas/in.json: $ref "http://example.com/c.json" at /properties/a/$ref names the network`},
		{"https in a nested file", map[string]string{"schemas/in.json": in("c.json#/x"), "schemas/c.json": `{"x": {"$ref": "https://example.com/c.json#/y"}}`},
			nil, `schemas/c.json: $ref "https://example.com/c.json#/y" at /x/$ref names the network`},
		{"file scheme", map[string]string{"schemas/in.json": in("file:///etc/passwd")},
			nil, `$ref "file:///etc/passwd" at /properties/a/$ref is not a relative path`},
		{"urn", map[string]string{"schemas/in.json": in("urn:example:c")},
			nil, `$ref "urn:example:c" at /properties/a/$ref is not a relative path`},
		{"network path", map[string]string{"schemas/in.json": in("//example.com/c.json")},
			nil, `$ref "//example.com/c.json" at /properties/a/$ref is not a relative path`},
		{"query", map[string]string{"schemas/in.json": in("c.json?v=2"), "schemas/c.json": "{}"},
			nil, `has a query`},
		{"missing file", map[string]string{"schemas/in.json": in("nope.json#/a")},
			nil, `schemas/in.json: $ref "nope.json#/a" at /properties/a/$ref names schemas/nope.json, which is not a file of the commit`},
		{"a directory", map[string]string{"schemas/in.json": in("sub"), "schemas/sub/c.json": "{}"},
			nil, `names schemas/sub, which is not a file of the commit`},
		{"link out of the tree", map[string]string{"schemas/in.json": in("out.json")},
			[]objectcache.File{link("schemas/out.json", "../../secret.json")}, `schemas/out.json: symbolic link points outside the repository`},
		{"nested file not json", map[string]string{"schemas/in.json": in("c.json"), "schemas/c.json": "{nope"},
			nil, `schemas/c.json: not valid JSON`},
		{"nested file not a schema", map[string]string{"schemas/in.json": in("c.json"), "schemas/c.json": `{"type": 12}`},
			nil, `schemas/in.json: not a valid JSON Schema`},
		{"name fragment into another file", map[string]string{"schemas/in.json": in("c.json#email"), "schemas/c.json": `{"$defs": {"e": {"$anchor": "email"}}}`},
			nil, `uses the name "email"; refer into another file with a JSON pointer`},
		{"anchor in a referenced file", map[string]string{"schemas/in.json": in("c.json"), "schemas/c.json": `{"$defs": {"e": {"$anchor": "email"}}}`},
			nil, `schemas/c.json: $anchor cannot be used in a file that another schema refers to`},
		{"dynamicRef to another file", map[string]string{"schemas/in.json": `{"$dynamicRef": "c.json#meta"}`, "schemas/c.json": "{}"},
			nil, `$dynamicRef "c.json#meta" at /$dynamicRef names another file; only $ref may`},
		{"other dialect", map[string]string{"schemas/in.json": in("c.json"), "schemas/c.json": `{"$schema": "http://json-schema.org/draft-07/schema#"}`},
			nil, `schemas/c.json: $schema "http://json-schema.org/draft-07/schema" differs from schemas/in.json's "https://json-schema.org/draft/2020-12/schema"`},
		{"nested $id", map[string]string{"schemas/in.json": `{"properties": {"a": {"$id": "sub/", "$ref": "c.json"}}}`, "schemas/c.json": "{}"},
			nil, `$id inside a schema (schemas/in.json at /properties/a/$id) changes where references resolve`},
		{"boolean root", map[string]string{"schemas/in.json": `true`}, nil, ""},
		{"root file too large", map[string]string{"schemas/in.json": big},
			nil, `schemas/in.json: the schema file is 1048595 bytes; a schema file is at most 1048576 (1 MiB)`},
		{"referenced file too large", map[string]string{"schemas/in.json": in("big.json"), "schemas/big.json": big},
			nil, `schemas/big.json: the schema file is 1048595 bytes; a schema file is at most 1048576`},
		{"NUL in a referenced file", map[string]string{"schemas/in.json": in("c.json"), "schemas/c.json": `{"description": "a\u0000b"}`},
			nil, `schemas/c.json: the schema contains a NUL character`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			apps, err := manifest.Load(schemaTree(c.files, c.extra...))
			if c.want == "" {
				if err != nil {
					t.Fatalf("load: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("loaded %s; want an error containing %q", apps[0].Actions[0].InputSchema, c.want)
			}
			if !errors.Is(err, manifest.ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
			if !strings.Contains(err.Error(), "named by apps.hello.actions.greet.input_schema") && !strings.Contains(c.want, "symbolic link") {
				t.Fatalf("error %q does not name the manifest field", err)
			}
		})
	}
}

// TestSchemaBundleCap: files each under the per-file cap whose bundle
// would pass the bundle cap are refused.
func TestSchemaBundleCap(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	props := []string{}
	part := `{"description": "` + strings.Repeat("y", manifest.MaxSchemaFile-100) + `"}`
	for i := range manifest.MaxSchemaBundle/manifest.MaxSchemaFile + 1 {
		name := string(rune('a'+i)) + ".json"
		files["schemas/"+name] = part
		props = append(props, `"`+name+`": {"$ref": "`+name+`"}`)
	}
	files["schemas/in.json"] = `{"properties": {` + strings.Join(props, ",") + `}}`
	_, err := manifest.Load(schemaTree(files))
	if err == nil || !strings.Contains(err.Error(), "refers to add up to more than 4194304 bytes") {
		t.Fatalf("load: %v; want the bundle cap", err)
	}
}

// TestSchemaTopLevelRef: a schema that is only a $ref to another file, in
// each dialect (draft 7 ignores the keywords beside a $ref, but not the
// definitions it points into), and a path that needs percent-encoding.
func TestSchemaTopLevelRef(t *testing.T) {
	t.Parallel()
	for _, d := range []string{"", `"$schema": "http://json-schema.org/draft-07/schema#", `, `"$schema": "https://json-schema.org/draft/2019-09/schema", `} {
		s := loadInputSchema(t, schemaTree(map[string]string{
			"schemas/in.json":                 `{` + d + `"$ref": "shared%20defs/person.json#/$defs/a%20b"}`,
			"schemas/shared defs/person.json": `{` + d + `"$defs": {"a b": {"type": "object", "required": ["name"]}}}`,
		}))
		requireValid(t, s, `{"name":"Ada"}`, `{}`, `[]`)
	}
}

// TestSchemaTooDeepRefused: a schema file nested past the bound is refused
// at once with a clear error (a 1 MiB "[[[[…" would otherwise recurse half
// a million levels deep in the server's sync).
func TestSchemaTooDeepRefused(t *testing.T) {
	t.Parallel()
	deep := `{"type": "object", "x": ` + strings.Repeat("[", 300000) + strings.Repeat("]", 300000) + `}`
	_, err := manifest.Load(schemaTree(map[string]string{"schemas/in.json": deep}))
	if err == nil || !strings.Contains(err.Error(), "levels deep") {
		t.Fatalf("Load of a 300,000-deep schema = %v, want a nesting refusal", err)
	}
}
