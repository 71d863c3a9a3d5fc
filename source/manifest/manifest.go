package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/internal/bytesize"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/spine"
)

// Defaults of the fields a manifest may leave out.
const (
	// DefaultTimeout is an app's timeout when it names none.
	DefaultTimeout = 15 * time.Minute
	// DefaultTag is an app's routing tag when it names none.
	DefaultTag = spine.DefaultTag
)

// keyPattern is what app and action keys look like: they appear in URLs
// (/jobs/run/{app}/{action}) and in the object cache's paths.
var keyPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,62}$`)

// tagPattern is what a routing tag looks like.
var tagPattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)

// rawManifest is windforce.yaml as written.
type rawManifest struct {
	Apps map[string]*rawApp `yaml:"apps"`
}

type rawApp struct {
	Entrypoint string                `yaml:"entrypoint"`
	Runtime    string                `yaml:"runtime"`
	Timeout    string                `yaml:"timeout"`
	Tag        string                `yaml:"tag"`
	Retry      *rawRetry             `yaml:"retry"`
	Limits     *rawLimits            `yaml:"limits"`
	Env        yaml.Node             `yaml:"env"`
	Warm       yaml.Node             `yaml:"warm"`
	Actions    map[string]*rawAction `yaml:"actions"`
}

type rawAction struct {
	InputSchema  string     `yaml:"input_schema"`
	OutputSchema string     `yaml:"output_schema"`
	Timeout      string     `yaml:"timeout"`
	Tag          string     `yaml:"tag"`
	Retry        *rawRetry  `yaml:"retry"`
	Limits       *rawLimits `yaml:"limits"`
	Env          yaml.Node  `yaml:"env"`
	Warm         yaml.Node  `yaml:"warm"`
}

// rawLimits are read as text, whatever YAML type they were written in, so
// that a bad value is reported under its field's name (limits.pids: "lots"
// is not a positive whole number) rather than as a YAML type error.
type rawLimits struct {
	Memory *string `yaml:"memory"`
	Pids   *string `yaml:"pids"`
	CPU    *string `yaml:"cpu"`
}

type rawRetry struct {
	MaxAttempts *int     `yaml:"max_attempts"`
	Backoff     string   `yaml:"backoff"`
	Factor      *float64 `yaml:"factor"`
}

// Load validates a commit's tree and its windforce.yaml and returns the
// apps it declares (without workspace, source and commit, which the caller
// knows), sorted by key, each with its actions sorted by key and its schema
// files read. Any problem is an *Error naming file and field.
func Load(files []objectcache.File) ([]catalog.App, error) {
	if err := CheckTree(files); err != nil {
		return nil, err
	}
	tree := NewTree(files)
	mf, ok := tree.regular(FileName)
	if !ok {
		return nil, &Error{Problems: []Problem{{File: FileName, Message: "not found at the repository root"}}}
	}
	raw, err := decode(mf.Data)
	if err != nil {
		return nil, err
	}
	var ps problems
	apps := loadApps(raw, tree, &ps)
	if err := ps.err(); err != nil {
		return nil, err
	}
	return apps, nil
}

// decode parses the YAML strictly: an unknown field is an error (a typo
// must not silently mean "default").
func decode(data []byte) (*rawManifest, error) {
	var raw rawManifest
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{Problems: []Problem{{File: FileName, Message: "the file is empty; it must list apps"}}}
		}
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		return nil, &Error{Problems: []Problem{{File: FileName, Message: "not valid YAML for a manifest: " + msg}}}
	}
	return &raw, nil
}

func loadApps(raw *rawManifest, tree Tree, ps *problems) []catalog.App {
	if len(raw.Apps) == 0 {
		ps.add(FileName, "apps", "no apps declared")
		return nil
	}
	var apps []catalog.App
	for _, key := range sortedKeys(raw.Apps) {
		field := "apps." + key
		if !keyPattern.MatchString(key) {
			ps.add(FileName, field, "app key %q is not a valid identifier (letters, digits, _ and -, starting with a letter or _)", key)
			continue
		}
		ra := raw.Apps[key]
		if ra == nil {
			ps.add(FileName, field, "app has no fields; entrypoint, runtime and actions are required")
			continue
		}
		apps = append(apps, loadApp(key, ra, tree, ps))
	}
	return apps
}

func loadApp(key string, ra *rawApp, tree Tree, ps *problems) catalog.App {
	field := "apps." + key
	app := catalog.App{Key: key, Runtime: ra.Runtime, Tag: DefaultTag, Timeout: DefaultTimeout, Retry: spine.DefaultRetry}
	if ep, ok := cleanRelPath(ra.Entrypoint); !ok {
		if ra.Entrypoint == "" {
			ps.add(FileName, field+".entrypoint", "is required")
		} else {
			ps.add(FileName, field+".entrypoint", "%q is not a relative path inside the repository", ra.Entrypoint)
		}
	} else if _, ok := tree.regular(ep); !ok {
		ps.add(FileName, field+".entrypoint", "file %s does not exist in the commit", ep)
	} else {
		app.Entrypoint = ep
	}
	if !catalog.KnownRuntime(ra.Runtime) {
		if ra.Runtime == "" {
			ps.add(FileName, field+".runtime", "is required (one of %s)", strings.Join(catalog.Runtimes, ", "))
		} else {
			ps.add(FileName, field+".runtime", "unknown runtime %q (want one of %s)", ra.Runtime, strings.Join(catalog.Runtimes, ", "))
		}
	}
	if d, ok := duration(ra.Timeout, field+".timeout", ps); ok && d > 0 {
		app.Timeout = d
	}
	if t, ok := tag(ra.Tag, field+".tag", ps); ok && t != "" {
		app.Tag = t
	}
	if r, ok := retry(ra.Retry, spine.DefaultRetry, field+".retry", ps); ok && r != nil {
		app.Retry = *r
	}
	app.Limits = limits(ra.Limits, field+".limits", ps)
	app.Env = env(&ra.Env, field+".env", ps)
	if w, _ := warm(&ra.Warm, field+".warm", ps); w != nil {
		app.Warm = warmFor(w, ra.Runtime, field+".warm", ps)
	}
	if len(ra.Actions) == 0 {
		ps.add(FileName, field+".actions", "no actions declared; an app needs at least one")
	}
	for _, akey := range sortedKeys(ra.Actions) {
		if a, ok := loadAction(field, akey, ra.Actions[akey], app, tree, ps); ok {
			app.Actions = append(app.Actions, a)
		}
	}
	return app
}

func loadAction(appField, key string, ra *rawAction, app catalog.App, tree Tree, ps *problems) (catalog.Action, bool) {
	field := appField + ".actions." + key
	if !keyPattern.MatchString(key) {
		ps.add(FileName, field, "action key %q is not a valid identifier (letters, digits, _ and -, starting with a letter or _)", key)
		return catalog.Action{}, false
	}
	a := catalog.Action{Key: key}
	if ra == nil {
		return a, true // "sleep:" and "sleep: {}" both mean all defaults
	}
	a.InputSchema = schema(ra.InputSchema, field+".input_schema", tree, ps)
	a.OutputSchema = schema(ra.OutputSchema, field+".output_schema", tree, ps)
	if d, ok := duration(ra.Timeout, field+".timeout", ps); ok {
		a.Timeout = d
	}
	if t, ok := tag(ra.Tag, field+".tag", ps); ok {
		a.Tag = t
	}
	if r, ok := retry(ra.Retry, app.Retry, field+".retry", ps); ok {
		a.Retry = r
	}
	a.Limits = limits(ra.Limits, field+".limits", ps)
	a.Env = env(&ra.Env, field+".env", ps)
	checkMergedEnv(app.Env, a.Env, field+".env", ps)
	if w, set := warm(&ra.Warm, field+".warm", ps); w != nil {
		a.Warm = warmFor(w, app.Runtime, field+".warm", ps)
	} else if set {
		a.Warm = catalog.Cold()
	}
	return a, true
}

// warmFor is w for an app of runtime, nil (with a problem) for a runtime
// no warm process serves.
func warmFor(w *spine.Warm, runtime, field string, ps *problems) *spine.Warm {
	if !warmRuntime(runtime) {
		if catalog.KnownRuntime(runtime) {
			ps.add(FileName, field, "runtime %s cannot run warm (warm is for bun, node and python)", runtime)
		}
		return nil
	}
	return w
}

// checkMergedEnv refuses an action whose env, merged over its app's, is
// more than a job's environment may hold.
func checkMergedEnv(app, action []spine.EnvVar, field string, ps *problems) {
	if len(action) == 0 {
		return
	}
	merged := catalog.MergeEnv(app, action)
	total := 0
	for _, v := range merged {
		total += len(v.Value)
	}
	if len(merged) > spine.MaxEnvVars {
		ps.add(FileName, field, "with the app's variables a job would have %d, at most %d", len(merged), spine.MaxEnvVars)
	}
	if total > spine.MaxEnvLiteralBytes {
		ps.add(FileName, field, "with the app's variables a job's literal values would be %d bytes, at most %d (32 KiB)", total, spine.MaxEnvLiteralBytes)
	}
}

// duration parses a Go duration ("10s", "1m30s"); "" is ok with 0.
func duration(s, field string, ps *problems) (time.Duration, bool) {
	if s == "" {
		return 0, true
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		ps.add(FileName, field, "%q is not a positive duration (examples: 30s, 5m, 1h30m)", s)
		return 0, false
	}
	return d, true
}

func tag(s, field string, ps *problems) (string, bool) {
	if s == "" || tagPattern.MatchString(s) {
		return s, true
	}
	ps.add(FileName, field, "tag %q may only hold letters, digits, '_', '.', ':' and '-' (at most 64)", s)
	return "", false
}

// retry fills the fields r leaves out from base; nil r is nil.
func retry(r *rawRetry, base spine.RetryPolicy, field string, ps *problems) (*spine.RetryPolicy, bool) {
	if r == nil {
		return nil, true
	}
	out := base
	ok := true
	if r.MaxAttempts != nil {
		if *r.MaxAttempts < 1 {
			ps.add(FileName, field+".max_attempts", "must be at least 1 (it counts the first attempt)")
			ok = false
		}
		out.MaxAttempts = *r.MaxAttempts
	}
	if d, good := duration(r.Backoff, field+".backoff", ps); !good {
		ok = false
	} else if d > 0 {
		out.Backoff = d
	}
	if r.Factor != nil {
		if *r.Factor < 1 {
			ps.add(FileName, field+".factor", "must be at least 1")
			ok = false
		}
		out.Factor = *r.Factor
	}
	return &out, ok
}

// limits reads a limits: block; each field left out stays zero (the
// app's value for an action, the worker's default for an app).
func limits(r *rawLimits, field string, ps *problems) spine.Limits {
	var l spine.Limits
	if r == nil {
		return l
	}
	if r.Memory != nil {
		n, err := bytesize.Parse(*r.Memory)
		if err != nil {
			ps.add(FileName, field+".memory", "%q is not a positive size (examples: 512MiB, 1GiB, 256MB, 1048576)", *r.Memory)
		}
		l.Memory = n
	}
	if r.Pids != nil {
		n, err := strconv.Atoi(strings.TrimSpace(*r.Pids))
		if err != nil || n < 1 {
			ps.add(FileName, field+".pids", "%q is not a positive whole number of processes", *r.Pids)
			n = 0
		}
		l.Pids = n
	}
	if r.CPU != nil {
		f, err := strconv.ParseFloat(strings.TrimSpace(*r.CPU), 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			ps.add(FileName, field+".cpu", "%q is not a positive number of cores (examples: 0.5, 1, 2)", *r.CPU)
			f = 0
		}
		l.CPU = f
	}
	return l
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Summary is a one-line description of apps for logs.
func Summary(apps []catalog.App) string {
	parts := make([]string, len(apps))
	for i, a := range apps {
		parts[i] = fmt.Sprintf("%s(%d actions)", a.Key, len(a.Actions))
	}
	return strings.Join(parts, ", ")
}
