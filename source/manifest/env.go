package manifest

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/windforce/windforce/spine"
)

// The env: and warm: blocks are read from their YAML nodes rather than
// into Go types: a variable's value is a literal of any scalar type (taken
// as the text written, so `PORT: 8080` is "8080" and `DEBUG: yes` is
// "yes") or a {secret: NAME} map, and warm is a bool or a map; each wrong
// shape is then reported under its own field path instead of as a YAML
// type error for the whole file.

// env reads an env: block: the variables sorted by name, nil when there
// are none. Every problem is added to ps under field (apps.x.env.NAME).
func env(n *yaml.Node, field string, ps *problems) []spine.EnvVar {
	n = deref(n)
	if n.Kind == 0 || isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		ps.add(FileName, field, "must be a map of NAME: value (a literal, or {secret: NAME})")
		return nil
	}
	var out []spine.EnvVar
	seen := map[string]bool{}
	total := 0
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		name := k.Value
		vf := field + "." + name
		if k.Kind != yaml.ScalarNode {
			ps.add(FileName, field, "a variable's name must be a plain word (line %d)", k.Line)
			continue
		}
		if p := spine.EnvNameProblem(name); p != "" {
			ps.add(FileName, vf, "%s", p)
			continue
		}
		if seen[name] {
			ps.add(FileName, vf, "is set twice")
			continue
		}
		seen[name] = true
		ev, ok := envValue(name, v, vf, ps)
		if !ok {
			continue
		}
		total += len(ev.Value)
		out = append(out, ev)
	}
	if len(seen) > spine.MaxEnvVars {
		ps.add(FileName, field, "has %d variables, at most %d", len(seen), spine.MaxEnvVars)
	}
	if total > spine.MaxEnvLiteralBytes {
		ps.add(FileName, field, "literal values are %d bytes together, at most %d (32 KiB)", total, spine.MaxEnvLiteralBytes)
	}
	return spine.SortEnv(out)
}

// envValue reads one variable's value: a scalar literal or {secret: NAME}.
func envValue(name string, v *yaml.Node, field string, ps *problems) (spine.EnvVar, bool) {
	switch {
	case isNull(v):
		ps.add(FileName, field, `has no value; write "" for an empty one`)
	case v.Kind == yaml.ScalarNode:
		if strings.IndexByte(v.Value, 0) >= 0 {
			ps.add(FileName, field, "holds the NUL character, which no environment variable can")
			return spine.EnvVar{}, false
		}
		return spine.EnvVar{Name: name, Value: v.Value}, true
	case v.Kind == yaml.MappingNode && len(v.Content) == 2 && deref(v.Content[0]).Value == "secret":
		s := deref(v.Content[1])
		if s.Kind != yaml.ScalarNode || isNull(s) || !spine.ValidSecretName(s.Value) {
			ps.add(FileName, field+".secret", "%q is not a secret name (letters, digits and _, not starting with a digit, at most 64)", s.Value)
			return spine.EnvVar{}, false
		}
		return spine.EnvVar{Name: name, Secret: s.Value}, true
	case v.Kind == yaml.SequenceNode:
		ps.add(FileName, field, "is a list; a variable is a literal or {secret: NAME}")
	default:
		ps.add(FileName, field, "is a map other than {secret: NAME}; a variable is a literal or {secret: NAME}")
	}
	return spine.EnvVar{}, false
}

// warm reads a warm: block: true (spine.DefaultWarm), false, or
// {max_jobs: N, idle: 5m} with each missing field DefaultWarm's. set is
// false when warm: is absent; a nil policy with set true is `warm: false`.
func warm(n *yaml.Node, field string, ps *problems) (w *spine.Warm, set bool) {
	n = deref(n)
	if n.Kind == 0 {
		return nil, false
	}
	const shape = "must be true, false or {max_jobs: N, idle: 5m}"
	switch {
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool":
		b, err := strconv.ParseBool(n.Value)
		if err != nil {
			ps.add(FileName, field, "%s (got %q)", shape, n.Value)
			return nil, false
		}
		if !b {
			return nil, true
		}
		d := spine.DefaultWarm
		return &d, true
	case n.Kind != yaml.MappingNode:
		ps.add(FileName, field, "%s (got %q)", shape, n.Value)
		return nil, false
	}
	out := spine.DefaultWarm
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		switch k.Value {
		case "max_jobs":
			m, err := strconv.Atoi(strings.TrimSpace(v.Value))
			if v.Kind != yaml.ScalarNode || err != nil || m < 1 {
				ps.add(FileName, field+".max_jobs", "%q is not a whole number of jobs, at least 1", v.Value)
				ok = false
				continue
			}
			out.MaxJobs = m
		case "idle":
			if v.Kind != yaml.ScalarNode || isNull(v) || v.Value == "" {
				ps.add(FileName, field+".idle", "is not a positive duration (examples: 30s, 5m, 1h)")
				ok = false
				continue
			}
			d, good := duration(v.Value, field+".idle", ps)
			if !good {
				ok = false
				continue
			}
			out.Idle = d
		default:
			ps.add(FileName, field+"."+k.Value, "unknown field (warm takes max_jobs and idle)")
			ok = false
		}
	}
	if !ok {
		return nil, false
	}
	return &out, true
}

// warmRuntime reports whether runtime is one a warm process can serve (DESIGN §7): a
// command is an executable run once per job.
func warmRuntime(runtime string) bool {
	return runtime == "bun" || runtime == "node" || runtime == "python"
}

// deref follows a YAML alias (*name) to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n == nil {
		return &yaml.Node{}
	}
	return n
}

// isNull reports an explicit YAML null (`~`, `null` or nothing at all).
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}
