package server_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/server"
	"github.com/windforce/windforce/spine"
)

// envManifest is examples/hello with env: and warm: on the app and its
// actions: greet adds a variable and its own warm policy, sleep is cold,
// fail names a secret (never enqueued here: enqueue checks that secrets
// exist).
const envManifest = `apps:
  hello:
    entrypoint: src/main.ts
    runtime: bun
    env:
      REGION: eu-west-1
      PORT: 8080
    warm: true
    actions:
      greet:
        input_schema: schemas/greet.input.json
        env: { GREETING: hi, REGION: us-east-1 }
        warm: { max_jobs: 10, idle: 30s }
      sleep:
        input_schema: schemas/sleep.input.json
        warm: false
      fail:
        env: { TOKEN: { secret: slack_token } }
`

// TestPinEnvWarmAPI: the apps API shows env (literals and secret
// references) and warm for the app and, as a job would pin them, for each
// action; a job's view shows its pinned env and warm, and keeps them after
// a commit changes the manifest.
func TestPinEnvWarmAPI(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		e.repo.Write(t, map[string]string{"windforce.yaml": envManifest})
		e.repo.CommitPush(t, "env and warm")
		e.call("POST", "/api/w/ws/sources/main/sync", adminToken, "").want(200)

		var app struct {
			Env     map[string]any   `json:"env"`
			Warm    *server.WarmView `json:"warm"`
			Actions []struct {
				Action string           `json:"action"`
				Env    map[string]any   `json:"env"`
				Warm   *server.WarmView `json:"warm"`
			} `json:"actions"`
		}
		if err := json.Unmarshal(e.call("GET", "/api/w/ws/apps/hello", adminToken, "").want(200).body, &app); err != nil {
			t.Fatal(err)
		}
		appEnv := map[string]any{"REGION": "eu-west-1", "PORT": "8080"}
		if !reflect.DeepEqual(app.Env, appEnv) || app.Warm == nil || *app.Warm != (server.WarmView{MaxJobs: 1000, Idle: "5m0s"}) {
			t.Errorf("app env %v warm %+v, want %v and the default warm", app.Env, app.Warm, appEnv)
		}
		want := map[string]struct {
			env  map[string]any
			warm *server.WarmView
		}{
			"fail":  {map[string]any{"REGION": "eu-west-1", "PORT": "8080", "TOKEN": map[string]any{"secret": "slack_token"}}, &server.WarmView{MaxJobs: 1000, Idle: "5m0s"}},
			"greet": {map[string]any{"REGION": "us-east-1", "PORT": "8080", "GREETING": "hi"}, &server.WarmView{MaxJobs: 10, Idle: "30s"}},
			"sleep": {appEnv, nil},
		}
		for _, a := range app.Actions {
			w := want[a.Action]
			if !reflect.DeepEqual(a.Env, w.env) || !reflect.DeepEqual(a.Warm, w.warm) {
				t.Errorf("action %s: env %v warm %+v, want %v and %+v", a.Action, a.Env, a.Warm, w.env, w.warm)
			}
		}

		greet := e.call("POST", "/api/w/ws/jobs/run/hello/greet", adminToken, `{"name":"Ada"}`).want(201).obj()["id"].(string)
		sleep := e.call("POST", "/api/w/ws/jobs/run/hello/sleep", adminToken, `{"seconds":1}`).want(201).obj()["id"].(string)
		view := func(id string) server.JobView {
			t.Helper()
			var v server.JobView
			if err := json.Unmarshal(e.call("GET", "/api/w/ws/jobs/"+id, adminToken, "").want(200).body, &v); err != nil {
				t.Fatal(err)
			}
			return v
		}
		check := func(when string) {
			t.Helper()
			if v := view(greet); !reflect.DeepEqual(map[string]any(v.Env), want["greet"].env) || !reflect.DeepEqual(v.Warm, want["greet"].warm) {
				t.Errorf("%s: greet job env %v warm %+v, want %v and %+v", when, v.Env, v.Warm, want["greet"].env, want["greet"].warm)
			}
			if v := view(sleep); !reflect.DeepEqual(map[string]any(v.Env), appEnv) || v.Warm != nil {
				t.Errorf("%s: sleep job env %v warm %+v, want %v and cold", when, v.Env, v.Warm, appEnv)
			}
		}
		check("at the first commit")

		// A commit without env and warm changes new jobs, not these.
		e.repo.Write(t, map[string]string{"windforce.yaml": strings.NewReplacer(
			"    env:\n      REGION: eu-west-1\n      PORT: 8080\n    warm: true\n", "",
			"        env: { GREETING: hi, REGION: us-east-1 }\n        warm: { max_jobs: 10, idle: 30s }\n", "").Replace(envManifest)})
		e.repo.CommitPush(t, "no env, no warm")
		e.call("POST", "/api/w/ws/sources/main/sync", adminToken, "").want(200)
		check("after the next commit")
		plain := e.call("POST", "/api/w/ws/jobs/run/hello/greet", adminToken, `{"name":"Bo"}`).want(201).obj()["id"].(string)
		if raw := e.call("GET", "/api/w/ws/jobs/"+plain, adminToken, "").want(200).body; strings.Contains(string(raw), `"env"`) ||
			strings.Contains(string(raw), `"warm"`) {
			t.Errorf("a job without env and warm shows them: %s", raw)
		}
	})
}

// TestViewJobEnvWarm: the view writes env as the manifest does (a literal
// as a string, a secret as {"secret": NAME}) and warm with its idle as
// duration text; both are omitted when the pin has none.
func TestViewJobEnvWarm(t *testing.T) {
	t.Parallel()
	j := spine.Job{ID: uuid.Must(uuid.NewV7()), Pin: spine.Pin{
		Env:  []spine.EnvVar{{Name: "EMPTY"}, {Name: "REGION", Value: "eu"}, {Name: "TOKEN", Secret: "slack_token"}},
		Warm: &spine.Warm{MaxJobs: 3, Idle: 90 * time.Second},
	}}
	out, err := json.Marshal(server.ViewJob(j))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"env":{"EMPTY":"","REGION":"eu","TOKEN":{"secret":"slack_token"}}`, `"warm":{"max_jobs":3,"idle":"1m30s"}`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("job view %s lacks %s", out, want)
		}
	}
	j.Pin.Env, j.Pin.Warm = nil, nil
	if out, _ = json.Marshal(server.ViewJob(j)); strings.Contains(string(out), `"env"`) || strings.Contains(string(out), `"warm"`) {
		t.Errorf("job view %s shows env or warm the pin does not have", out)
	}
}
