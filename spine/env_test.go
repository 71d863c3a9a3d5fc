package spine

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestEnvWarmColumns: the columns read back what was written, none is
// NULL, and equal pins give equal text (coalescing compares it).
func TestEnvWarmColumns(t *testing.T) {
	env := []EnvVar{{Name: "A", Value: `quote " and ünïcode`}, {Name: "B", Secret: "b"}, {Name: "C"}}
	got, err := ParseEnvColumn(EnvColumn(env))
	if err != nil || !reflect.DeepEqual(got, env) {
		t.Errorf("env round trip = %+v, %v; want %+v", got, err, env)
	}
	if EnvColumn(nil) != nil || EnvColumn([]EnvVar{}) != nil {
		t.Error("an empty env is not NULL")
	}
	if *EnvColumn(env) != *EnvColumn(append([]EnvVar(nil), env...)) {
		t.Error("equal envs encode differently")
	}
	w := &Warm{MaxJobs: 3, Idle: 1500 * time.Millisecond}
	if got, err := ParseWarmColumn(WarmColumn(w)); err != nil || !reflect.DeepEqual(got, w) {
		t.Errorf("warm round trip = %+v, %v; want %+v", got, err, w)
	}
	if WarmColumn(nil) != nil {
		t.Error("a cold pin's warm is not NULL")
	}
	if got, err := ParseWarmColumn(nil); got != nil || err != nil {
		t.Errorf("ParseWarmColumn(NULL) = %+v, %v; want nil", got, err)
	}
	bad := "[1"
	if _, err := ParseEnvColumn(&bad); err == nil {
		t.Error("a bad env column reads without error")
	}
}

// TestPrepareEnqueueEnvWarm: enqueue sorts a pin's env and refuses one
// (or a warm policy) a manifest could not have produced.
func TestPrepareEnqueueEnvWarm(t *testing.T) {
	base := EnqueueParams{Workspace: "ws", TriggerKind: TriggerAPI, Pin: Pin{AppKey: "a", ActionKey: "b"}}
	p := base
	p.Pin.Env = []EnvVar{{Name: "Z", Value: "1"}, {Name: "A", Secret: "s"}}
	got, err := PrepareEnqueue(p, time.Now())
	if err != nil || got.Pin.Env[0].Name != "A" || p.Pin.Env[0].Name != "Z" {
		t.Fatalf("PrepareEnqueue = %+v, %v; want the env sorted in a copy", got.Pin.Env, err)
	}
	many := make([]EnvVar, MaxEnvVars+1)
	for i := range many {
		many[i] = EnvVar{Name: "V" + strings.Repeat("x", i)}
	}
	for name, pin := range map[string]Pin{
		"bad name":     {Env: []EnvVar{{Name: "1A", Value: "x"}}},
		"reserved":     {Env: []EnvVar{{Name: "WF_TOKEN", Value: "x"}}},
		"twice":        {Env: []EnvVar{{Name: "A", Value: "x"}, {Name: "A", Value: "y"}}},
		"both":         {Env: []EnvVar{{Name: "A", Value: "x", Secret: "s"}}},
		"bad secret":   {Env: []EnvVar{{Name: "A", Secret: "a-b"}}},
		"nul":          {Env: []EnvVar{{Name: "A", Value: "a\x00"}}},
		"too many":     {Env: many},
		"too long":     {Env: []EnvVar{{Name: "A", Value: strings.Repeat("x", MaxEnvLiteralBytes+1)}}},
		"warm no jobs": {Warm: &Warm{Idle: time.Second}},
		"warm no idle": {Warm: &Warm{MaxJobs: 1}},
	} {
		p := base
		pin.AppKey, pin.ActionKey = "a", "b"
		p.Pin = pin
		if _, err := PrepareEnqueue(p, time.Now()); !errors.Is(err, ErrInvalid) {
			t.Errorf("PrepareEnqueue with %s = %v, want ErrInvalid", name, err)
		}
	}
}
