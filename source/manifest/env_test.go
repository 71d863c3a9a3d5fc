package manifest_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/source/manifest"
	"github.com/windforce/windforce/spine"
)

// envApp is an app with env: and warm: at both levels; runtime, the app's
// env/warm lines and the greet action's are filled per test.
func envApp(runtime, appLines, greetLines string) string {
	return "apps:\n  hello:\n    entrypoint: src/main.ts\n    runtime: " + runtime + "\n" + appLines +
		"    actions:\n      greet:\n" + greetLines + "      plain: {}\n"
}

// TestLoadEnvWarm: literals of every YAML scalar type are taken as the
// text written, secret references are kept as names, sorted by name; the
// action's env is its own (merged at enqueue) and its warm replaces the
// app's, `warm: false` included.
func TestLoadEnvWarm(t *testing.T) {
	t.Parallel()
	y := envApp("bun",
		"    env:\n      REGION: eu-west-1\n      PORT: 8080\n      RATIO: 1.50\n      DEBUG: true\n      OLD: yes\n"+
			"      EMPTY: \"\"\n      QUOTED: '007'\n      SLACK_TOKEN: { secret: slack_token }\n"+
			"    warm: true\n",
		"        env:\n          REGION: us-east-1\n          ONLY_GREET: { secret: g }\n        warm: false\n")
	apps, err := manifest.Load(goodTree(y))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	app := apps[0]
	wantApp := []spine.EnvVar{
		{Name: "DEBUG", Value: "true"}, {Name: "EMPTY"}, {Name: "OLD", Value: "yes"}, {Name: "PORT", Value: "8080"},
		{Name: "QUOTED", Value: "007"}, {Name: "RATIO", Value: "1.50"}, {Name: "REGION", Value: "eu-west-1"},
		{Name: "SLACK_TOKEN", Secret: "slack_token"},
	}
	if !reflect.DeepEqual(app.Env, wantApp) {
		t.Errorf("app env =\n %+v\nwant\n %+v", app.Env, wantApp)
	}
	if app.Warm == nil || *app.Warm != spine.DefaultWarm {
		t.Errorf("app warm = %+v, want DefaultWarm", app.Warm)
	}
	greet, plain := app.Actions[0], app.Actions[1]
	wantGreet := []spine.EnvVar{{Name: "ONLY_GREET", Secret: "g"}, {Name: "REGION", Value: "us-east-1"}}
	if !reflect.DeepEqual(greet.Env, wantGreet) || !catalog.IsCold(greet.Warm) {
		t.Errorf("greet env %+v warm %+v, want %+v and cold", greet.Env, greet.Warm, wantGreet)
	}
	if plain.Env != nil || plain.Warm != nil {
		t.Errorf("plain env %+v warm %+v, want none of its own", plain.Env, plain.Warm)
	}
	// What a job pins: the action's env over the app's, the action's warm.
	p := catalog.Pin(app, greet)
	if len(p.Env) != len(wantApp)+1 || p.Warm != nil {
		t.Errorf("greet pins env %+v warm %+v", p.Env, p.Warm)
	}
	for _, v := range p.Env {
		if v.Name == "REGION" && v.Value != "us-east-1" {
			t.Errorf("greet pins REGION=%q, want the action's", v.Value)
		}
	}
	if p := catalog.Pin(app, plain); !reflect.DeepEqual(p.Env, wantApp) || p.Warm == nil || *p.Warm != spine.DefaultWarm {
		t.Errorf("plain pins env %+v warm %+v, want the app's", p.Env, p.Warm)
	}
}

// TestLoadWarmForms: the map form fills missing fields from DefaultWarm,
// an action may be warm in a cold app, and every warm runtime takes it.
func TestLoadWarmForms(t *testing.T) {
	t.Parallel()
	cases := []struct {
		runtime, app, greet string
		wantApp, wantGreet  *spine.Warm
	}{
		{"node", "    warm: { max_jobs: 5, idle: 30s }\n", "", &spine.Warm{MaxJobs: 5, Idle: 30 * time.Second}, nil},
		{"python", "    warm: { max_jobs: 5 }\n", "        warm: { idle: 1m }\n",
			&spine.Warm{MaxJobs: 5, Idle: spine.DefaultWarm.Idle}, &spine.Warm{MaxJobs: spine.DefaultWarm.MaxJobs, Idle: time.Minute}},
		{"bun", "    warm: {}\n", "", &spine.DefaultWarm, nil},
		{"bun", "    warm: false\n", "        warm: true\n", nil, &spine.DefaultWarm},
		{"bun", "", "        warm: { max_jobs: 1 }\n", nil, &spine.Warm{MaxJobs: 1, Idle: spine.DefaultWarm.Idle}},
		{"command", "    warm: false\n", "        warm: false\n", nil, catalog.Cold()},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			apps, err := manifest.Load(goodTree(envApp(c.runtime, c.app, c.greet)))
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			app := apps[0]
			if !reflect.DeepEqual(app.Warm, c.wantApp) || !reflect.DeepEqual(app.Actions[0].Warm, c.wantGreet) {
				t.Errorf("warm app %+v greet %+v, want %+v and %+v", app.Warm, app.Actions[0].Warm, c.wantApp, c.wantGreet)
			}
		})
	}
}

// TestLoadEnvWarmRefuses: each bad env: or warm: is refused under its own
// field path.
func TestLoadEnvWarmRefuses(t *testing.T) {
	t.Parallel()
	many := "    env:\n"
	for i := range spine.MaxEnvVars + 1 {
		many += fmt.Sprintf("      V%d: x\n", i)
	}
	half := strings.Repeat("x", spine.MaxEnvLiteralBytes/2+1)
	cases := []struct {
		name, runtime, app, greet, want string
	}{
		{"bad name", "bun", "    env:\n      9LIVES: x\n", "", `apps.hello.env.9LIVES: name "9LIVES" is not a variable name`},
		{"dash in name", "bun", "    env:\n      MY-VAR: x\n", "", `apps.hello.env.MY-VAR: name "MY-VAR"`},
		{"long name", "bun", "    env:\n      " + strings.Repeat("A", 129) + ": x\n", "", "is longer than 128 characters"},
		{"reserved", "bun", "", "        env:\n          WF_TOKEN: x\n", "apps.hello.actions.greet.env.WF_TOKEN: name \"WF_TOKEN\" is reserved"},
		{"reserved lower case", "bun", "    env:\n      wf_input: x\n", "", "apps.hello.env.wf_input: name \"wf_input\" is reserved"},
		{"list", "bun", "    env:\n      A: [1, 2]\n", "", "apps.hello.env.A: is a list"},
		{"nested map", "bun", "    env:\n      A: { value: x }\n", "", "apps.hello.env.A: is a map other than {secret: NAME}"},
		{"secret and more", "bun", "    env:\n      A: { secret: x, value: y }\n", "", "apps.hello.env.A: is a map other than {secret: NAME}"},
		{"null", "bun", "    env:\n      A:\n", "", "apps.hello.env.A: has no value"},
		{"tilde", "bun", "    env:\n      A: ~\n", "", "apps.hello.env.A: has no value"},
		{"nul", "bun", "    env:\n      A: \"a\\0b\"\n", "", "apps.hello.env.A: holds the NUL character"},
		{"bad secret name", "bun", "    env:\n      A: { secret: 'my-token' }\n", "", `apps.hello.env.A.secret: "my-token" is not a secret name`},
		{"long secret name", "bun", "    env:\n      A: { secret: " + strings.Repeat("s", 65) + " }\n", "", "apps.hello.env.A.secret:"},
		{"secret not a name", "bun", "    env:\n      A: { secret: [x] }\n", "", "apps.hello.env.A.secret:"},
		{"env a list", "bun", "    env: [A, B]\n", "", "apps.hello.env: must be a map of NAME: value"},
		{"env a string", "bun", "    env: A=1\n", "", "apps.hello.env: must be a map"},
		{"too many", "bun", many, "", "apps.hello.env: has 101 variables, at most 100"},
		{"too long", "bun", "    env:\n      A: " + half + "\n      B: " + half + "\n", "", "apps.hello.env: literal values are"},
		{"too long merged", "bun", "    env:\n      A: " + half + "\n", "        env:\n          B: " + half + "\n",
			"apps.hello.actions.greet.env: with the app's variables a job's literal values would be"},
		{"twice", "bun", "    env:\n      A: x\n      A: y\n", "", "apps.hello.env.A: is set twice"},
		{"warm command", "command", "    warm: true\n", "", "apps.hello.warm: runtime command cannot run warm"},
		{"warm command action", "command", "", "        warm: { max_jobs: 3 }\n", "apps.hello.actions.greet.warm: runtime command cannot run warm"},
		{"warm word", "bun", "    warm: always\n", "", `apps.hello.warm: must be true, false or {max_jobs: N, idle: 5m} (got "always")`},
		{"warm quoted true", "bun", "    warm: 'true'\n", "", "apps.hello.warm: must be true, false"},
		{"warm null", "bun", "    warm:\n", "", "apps.hello.warm: must be true, false"},
		{"warm list", "bun", "    warm: [1]\n", "", "apps.hello.warm: must be true, false"},
		{"zero max_jobs", "bun", "    warm: { max_jobs: 0 }\n", "", `apps.hello.warm.max_jobs: "0" is not a whole number of jobs`},
		{"fraction max_jobs", "bun", "", "        warm: { max_jobs: 2.5 }\n", `apps.hello.actions.greet.warm.max_jobs: "2.5"`},
		{"zero idle", "bun", "    warm: { idle: 0s }\n", "", `apps.hello.warm.idle: "0s" is not a positive duration`},
		{"bad idle", "bun", "    warm: { idle: 5 }\n", "", `apps.hello.warm.idle: "5" is not a positive duration`},
		{"empty idle", "bun", "    warm: { idle: }\n", "", "apps.hello.warm.idle: is not a positive duration"},
		{"unknown warm field", "bun", "    warm: { jobs: 3 }\n", "", "apps.hello.warm.jobs: unknown field"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			apps, err := manifest.Load(goodTree(envApp(c.runtime, c.app, c.greet)))
			if err == nil {
				t.Fatalf("loaded %+v; want an error containing %q", apps, c.want)
			}
			if !errors.Is(err, manifest.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
		})
	}
}

// TestLoadEnvAllProblems: every bad variable is reported, not the first.
func TestLoadEnvAllProblems(t *testing.T) {
	t.Parallel()
	y := envApp("bun", "    env:\n      9A: x\n      B: [1]\n      C: ok\n    warm: maybe\n",
		"        env:\n          WF_X: y\n")
	_, err := manifest.Load(goodTree(y))
	var me *manifest.Error
	if !errors.As(err, &me) || len(me.Problems) != 4 {
		t.Fatalf("err = %v; want four problems", err)
	}
}
