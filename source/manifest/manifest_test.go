package manifest_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/source/manifest"
	"github.com/windforce/windforce/spine"
)

const goodYAML = `apps:
  hello:
    entrypoint: src/main.ts
    runtime: bun
    timeout: 60s
    tag: default
    limits: { memory: 512MiB, pids: 256, cpu: 1 }
    actions:
      greet:
        input_schema: schemas/greet.input.json
        output_schema: schemas/greet.output.json
        timeout: 10s
        retry: { max_attempts: 3, backoff: 5s, factor: 5 }
        limits: { cpu: 0.5 }
      sleep: {}
      fail:
`

func file(p, data string) objectcache.File {
	return objectcache.File{Path: p, Mode: 0o644, Data: []byte(data)}
}

func link(p, target string) objectcache.File {
	return objectcache.File{Path: p, Mode: fs.ModeSymlink | 0o777, Data: []byte(target)}
}

func goodTree(yaml string) []objectcache.File {
	return []objectcache.File{
		file("windforce.yaml", yaml),
		file("src/main.ts", "export async function main() {}"),
		file("schemas/greet.input.json", `{"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}`),
		file("schemas/greet.output.json", `{"type":"object"}`),
	}
}

func TestLoadGood(t *testing.T) {
	t.Parallel()
	apps, err := manifest.Load(goodTree(goodYAML))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if len(apps) != 1 {
		t.Fatalf("got %d apps", len(apps))
	}
	a := apps[0]
	if a.Key != "hello" || a.Entrypoint != "src/main.ts" || a.Runtime != "bun" || a.Timeout != time.Minute || a.Tag != "default" {
		t.Fatalf("app = %+v", a)
	}
	if a.Retry != spine.DefaultRetry {
		t.Fatalf("app retry = %+v, want the default", a.Retry)
	}
	if len(a.Actions) != 3 || a.Actions[0].Key != "fail" || a.Actions[1].Key != "greet" || a.Actions[2].Key != "sleep" {
		t.Fatalf("actions = %+v", a.Actions)
	}
	g := a.Actions[1]
	if string(g.InputSchema) != `{"type":"object","required":["name"],"properties":{"name":{"type":"string"}}}` {
		t.Fatalf("input schema = %s", g.InputSchema)
	}
	if g.Timeout != 10*time.Second || g.Retry == nil || *g.Retry != (spine.RetryPolicy{MaxAttempts: 3, Backoff: 5 * time.Second, Factor: 5}) {
		t.Fatalf("greet overrides = %+v retry %+v", g, g.Retry)
	}
	if a.Limits != (spine.Limits{Memory: 512 << 20, Pids: 256, CPU: 1}) {
		t.Fatalf("app limits = %+v", a.Limits)
	}
	if g.Limits != (spine.Limits{CPU: 0.5}) {
		t.Fatalf("greet limits = %+v, want only its own cpu (the rest is the app's at enqueue)", g.Limits)
	}
	if s := a.Actions[2]; s.Timeout != 0 || s.Tag != "" || s.Retry != nil || s.InputSchema != nil || s.Limits != (spine.Limits{}) {
		t.Fatalf("sleep has overrides: %+v", s)
	}
}

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	tree := goodTree("apps:\n  hello:\n    entrypoint: src/main.ts\n    runtime: node\n    actions:\n      run: {}\n")
	apps, err := manifest.Load(tree)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	a := apps[0]
	if a.Timeout != manifest.DefaultTimeout || a.Tag != "default" || a.Retry != spine.DefaultRetry || a.Limits != (spine.Limits{}) {
		t.Fatalf("defaults not applied: %+v", a)
	}
}

// TestLoadRefuses checks that each bad source fails with a message naming
// the file and the field.
func TestLoadRefuses(t *testing.T) {
	t.Parallel()
	replace := func(old, new string) []objectcache.File {
		return goodTree(strings.Replace(goodYAML, old, new, 1))
	}
	cases := []struct {
		name string
		tree []objectcache.File
		want string
	}{
		{"no manifest", goodTree(goodYAML)[1:], "windforce.yaml: not found"},
		{"not yaml", goodTree("apps: [1, 2\n"), "windforce.yaml: not valid YAML"},
		{"unknown field", replace("tag: default", "tags: default"), "field tags not found"},
		{"empty", goodTree(""), "windforce.yaml: the file is empty"},
		{"no apps", goodTree("apps: {}\n"), "windforce.yaml: apps: no apps declared"},
		{"bad app key", replace("  hello:", "  hel lo:"), `apps.hel lo: app key "hel lo" is not a valid identifier`},
		{"bad action key", replace("      sleep: {}", "      9sleep: {}"), `apps.hello.actions.9sleep: action key "9sleep"`},
		{"unknown runtime", replace("runtime: bun", "runtime: java"), `apps.hello.runtime: unknown runtime "java"`},
		{"missing runtime", replace("runtime: bun", ""), "apps.hello.runtime: is required"},
		{"bad duration", replace("timeout: 60s", "timeout: soon"), `apps.hello.timeout: "soon" is not a positive duration`},
		{"negative duration", replace("timeout: 10s", "timeout: -10s"), `apps.hello.actions.greet.timeout: "-10s"`},
		{"bad backoff", replace("backoff: 5s", "backoff: 5"), `apps.hello.actions.greet.retry.backoff: "5"`},
		{"bad attempts", replace("max_attempts: 3", "max_attempts: 0"), "apps.hello.actions.greet.retry.max_attempts: must be at least 1"},
		{"bad memory", replace("memory: 512MiB", "memory: lots"), `apps.hello.limits.memory: "lots" is not a positive size`},
		{"fractional memory", replace("memory: 512MiB", "memory: 1.5GiB"), `apps.hello.limits.memory: "1.5GiB"`},
		{"zero memory", replace("memory: 512MiB", "memory: 0"), `apps.hello.limits.memory: "0"`},
		{"bad pids", replace("pids: 256", "pids: 2.5"), `apps.hello.limits.pids: "2.5" is not a positive whole number`},
		{"zero pids", replace("pids: 256", "pids: 0"), `apps.hello.limits.pids: "0"`},
		{"bad cpu", replace("cpu: 0.5", "cpu: -1"), `apps.hello.actions.greet.limits.cpu: "-1" is not a positive number of cores`},
		{"infinite cpu", replace("cpu: 0.5", "cpu: .inf"), `apps.hello.actions.greet.limits.cpu: ".inf"`},
		{"nan cpu", replace("cpu: 1 ", "cpu: NaN "), `apps.hello.limits.cpu: "NaN"`},
		{"unknown limit", replace("cpu: 0.5", "cpus: 0.5"), "field cpus not found"},
		{"limits not a map", replace("limits: { cpu: 0.5 }", "limits: 1GiB"), "not valid YAML for a manifest"},
		{"missing entrypoint file", replace("src/main.ts", "src/nope.ts"), "apps.hello.entrypoint: file src/nope.ts does not exist"},
		{"escaping entrypoint", replace("src/main.ts", "../outside.ts"), `apps.hello.entrypoint: "../outside.ts" is not a relative path inside the repository`},
		{"absolute entrypoint", replace("src/main.ts", "/etc/passwd"), `apps.hello.entrypoint: "/etc/passwd" is not a relative path`},
		{"missing schema", replace("schemas/greet.input.json", "schemas/nope.json"), "apps.hello.actions.greet.input_schema: schema file schemas/nope.json does not exist"},
		{"escaping schema", replace("schemas/greet.input.json", "../../etc/x.json"), `apps.hello.actions.greet.input_schema: "../../etc/x.json" is not a relative path`},
		{"no actions", goodTree("apps:\n  a:\n    entrypoint: src/main.ts\n    runtime: bun\n"), "apps.a.actions: no actions declared"},
		{"bad tag", replace("tag: default", "tag: 'a b'"), `apps.hello.tag: tag "a b"`},
		{"schema not json", append(goodTree(goodYAML)[:2], file("schemas/greet.input.json", "{nope"), goodTree(goodYAML)[3]),
			"schemas/greet.input.json: not valid JSON"},
		{"schema not a schema", append(goodTree(goodYAML)[:2], file("schemas/greet.input.json", `{"type": 12}`), goodTree(goodYAML)[3]),
			"schemas/greet.input.json: not a valid JSON Schema"},
		{"escaping symlink", append(goodTree(goodYAML), link("src/secret", "../../etc/passwd")), `src/secret: symbolic link points outside the repository (to "../../etc/passwd")`},
		{"absolute symlink", append(goodTree(goodYAML), link("key", "/root/.ssh/id_rsa")), "key: symbolic link points outside"},
		{"schema with a lone surrogate", append(goodTree(goodYAML)[:2], file("schemas/greet.input.json", `{"description": "\ud800"}`), goodTree(goodYAML)[3]),
			"schemas/greet.input.json: the schema contains a lone UTF-16 surrogate"},
		{"remote schema ref", append(goodTree(goodYAML)[:2], file("schemas/greet.input.json", `{"$ref": "file:///etc/passwd"}`), goodTree(goodYAML)[3]),
			`schemas/greet.input.json: $ref "file:///etc/passwd" at /$ref is not a relative path`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			apps, err := manifest.Load(c.tree)
			if err == nil {
				t.Fatalf("loaded %+v; want an error containing %q", apps, c.want)
			}
			var me *manifest.Error
			if !errors.As(err, &me) || !errors.Is(err, manifest.ErrInvalid) {
				t.Fatalf("error %v is not a *manifest.Error", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
		})
	}
}

// TestLoadLimits: sizes in any accepted spelling, numbers written as YAML
// strings or numbers, and an action that sets only some fields.
func TestLoadLimits(t *testing.T) {
	t.Parallel()
	y := "apps:\n  hello:\n    entrypoint: src/main.ts\n    runtime: bun\n" +
		"    limits: { memory: 1073741824, pids: '64' }\n" +
		"    actions:\n      a:\n        limits: { memory: 256MB }\n      b:\n        limits: {}\n      c:\n        limits:\n"
	apps, err := manifest.Load(goodTree(y))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	app := apps[0]
	if app.Limits != (spine.Limits{Memory: 1 << 30, Pids: 64}) {
		t.Fatalf("app limits = %+v", app.Limits)
	}
	want := []spine.Limits{{Memory: 256e6}, {}, {}}
	for i, a := range app.Actions {
		if a.Limits != want[i] {
			t.Errorf("action %s limits = %+v, want %+v", a.Key, a.Limits, want[i])
		}
	}
}

// TestLoadSymlinkInside: a link inside the tree is fine, and a manifest
// path may go through it.
func TestLoadSymlinkInside(t *testing.T) {
	t.Parallel()
	tree := append(goodTree(strings.Replace(goodYAML, "entrypoint: src/main.ts", "entrypoint: main.ts", 1)),
		link("main.ts", "src/main.ts"))
	apps, err := manifest.Load(tree)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if apps[0].Entrypoint != "main.ts" {
		t.Fatalf("entrypoint = %q", apps[0].Entrypoint)
	}
}

// TestLoadManyProblems reports every problem at once.
func TestLoadManyProblems(t *testing.T) {
	t.Parallel()
	y := strings.Replace(strings.Replace(goodYAML, "runtime: bun", "runtime: java", 1), "timeout: 60s", "timeout: x", 1)
	_, err := manifest.Load(goodTree(y))
	var me *manifest.Error
	if !errors.As(err, &me) || len(me.Problems) != 2 {
		t.Fatalf("err = %v; want two problems", err)
	}
}
