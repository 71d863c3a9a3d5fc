package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/windforce/windforce/secrets"
	"github.com/windforce/windforce/spine"
)

// SecretStore is where a runner reads, at claim, the workspace secrets a
// job's pinned env names, and records which versions the job received
// (the store core, package store, implements it on both databases).
type SecretStore interface {
	// SecretsSealed returns the current sealed rows of those names of
	// workspace that exist.
	SecretsSealed(ctx context.Context, workspace string, names []string) ([]secrets.Sealed, error)
	// SetJobSecrets records the secrets ("name@version") the job of lease
	// received, fenced on its claim token (spine.ErrNotOwner once lost).
	SetJobSecrets(ctx context.Context, lease spine.Lease, received []string) error
}

// JobEnv is what a job receives at claim beyond the entry contract: its
// pinned env resolved, and the masker of everything stored from it.
type JobEnv struct {
	// Vars are the pin's variables as NAME=value, in the pin's order:
	// literals as given, secrets as opened now. A name the runner sets
	// itself (WF_*, HOME, PATH …) is left out: the runner's wins.
	Vars []string
	// Received are the secrets the job got, "name@version", sorted by
	// name, once each; what the job view shows.
	Received []string
	// mask replaces the job's WF_TOKEN and each secret value it got (in
	// every form of secretForms) in its stored logs, result and error.
	mask *masker
}

// ResolveEnv resolves the env job's pin names, at claim (DESIGN §8): each
// literal as given, each secret as its value current now, read through
// Config.Secrets and opened with the worker's key (Config.SecretsKey),
// and records which versions it received on the job (fenced on its
// lease). token is the job's WF_TOKEN, masked with the secret values. A
// secret that no longer exists, or does not open with this worker's key,
// is the job's failure naming it. Every runtime calls it once per claim,
// a fresh process (Handle) as a warm one, and hands the job Vars and only
// to that job.
func (r *Runner) ResolveEnv(ctx context.Context, job *spine.ClaimedJob, token string) (JobEnv, error) {
	names := spine.SecretNames(job.Pin.Env)
	env := JobEnv{mask: newMasker(token, nil)}
	values := map[string]string{}
	if len(names) > 0 {
		var err error
		if values, env.Received, err = r.openSecrets(ctx, job.Workspace, names); err != nil {
			return env, err
		}
		lease := spine.Lease{JobID: job.ID, ClaimToken: job.ClaimToken}
		if err := r.cfg.Secrets.SetJobSecrets(ctx, lease, env.Received); err != nil {
			return env, fmt.Errorf("record the secrets the job received: %w", err)
		}
		shown := make([]maskedSecret, 0, len(names))
		for _, n := range names {
			shown = append(shown, maskedSecret{Name: n, Value: values[n]})
		}
		env.mask = newMasker(token, shown)
	}
	for _, v := range job.Pin.Env {
		if runnerSets(v.Name) {
			continue
		}
		if v.Secret != "" {
			env.Vars = append(env.Vars, v.Name+"="+values[v.Secret])
		} else {
			env.Vars = append(env.Vars, v.Name+"="+v.Value)
		}
	}
	return env, nil
}

// openSecrets reads names of workspace as they are now and opens them:
// their values by name and "name@version" of each. The failures say
// which secret and why, never a value.
func (r *Runner) openSecrets(ctx context.Context, workspace string, names []string) (map[string]string, []string, error) {
	if r.cfg.Secrets == nil {
		return nil, nil, &Failure{Kind: "missing_secret",
			Message: fmt.Sprintf("the job's env names secrets (%s) but this worker has no secret store", strings.Join(names, ", "))}
	}
	sealed, err := r.cfg.Secrets.SecretsSealed(ctx, workspace, names)
	if err != nil {
		return nil, nil, fmt.Errorf("read the job's secrets: %w", err)
	}
	values := make(map[string]string, len(sealed))
	var received []string
	for _, s := range sealed {
		v, err := secrets.Open(r.cfg.SecretsKey, workspace, s.Name, s.Version, s.Ciphertext)
		if err != nil {
			return nil, nil, undecryptable(workspace, s, r.cfg.SecretsKey, err)
		}
		values[s.Name] = string(v)
		received = append(received, s.Name+"@"+strconv.FormatInt(s.Version, 10))
	}
	if missing := slices.DeleteFunc(slices.Clone(names), func(n string) bool { _, ok := values[n]; return ok }); len(missing) > 0 {
		return nil, nil, missingAtClaim(workspace, missing)
	}
	slices.Sort(received)
	return values, received, nil
}

// missingAtClaim is the failure of a job whose secrets were deleted after
// it was enqueued.
func missingAtClaim(workspace string, missing []string) *Failure {
	quoted := make([]string, len(missing))
	for i, n := range missing {
		quoted[i] = strconv.Quote(n)
	}
	msg := fmt.Sprintf("secret %s no longer exists in workspace %q", quoted[0], workspace)
	if len(missing) > 1 {
		msg = fmt.Sprintf("secrets %s no longer exist in workspace %q", strings.Join(quoted, ", "), workspace)
	}
	return &Failure{Message: msg, Kind: "missing_secret"}
}

// undecryptable is the failure of a job whose secret does not open with
// the worker's key: sealed with another key (the worker's
// WINDFORCE_SECRETS_KEY or WINDFORCE_SECRET differs from the server's, or
// a rotation is half done) or altered.
func undecryptable(workspace string, s secrets.Sealed, key secrets.Key, err error) *Failure {
	why := "it was altered or sealed for another secret"
	switch {
	case errors.Is(err, secrets.ErrNoKey):
		why = "this worker has no secrets key"
	case s.KeyID != key.ID():
		why = fmt.Sprintf("it was sealed with key %s and this worker has key %s (set the same WINDFORCE_SECRETS_KEY or WINDFORCE_SECRET as the server)", s.KeyID, key.ID())
	}
	return &Failure{Kind: "secret_undecryptable",
		Message: fmt.Sprintf("secret %q (version %d) of workspace %q cannot be decrypted: %s", s.Name, s.Version, workspace, why)}
}

// runnerSets reports whether name is one the runner sets itself (jobEnv)
// or reserves (WF_*): such a name in a manifest's env is left out, so the
// entry contract cannot be shadowed. LANG, LC_ALL and TZ are the worker's
// when it has them (withEnv), else the manifest's.
func runnerSets(name string) bool {
	if strings.HasPrefix(name, "WF_") {
		return true
	}
	switch name {
	case "HOME", "TMPDIR", "PATH", "WINDFORCE_URL", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED":
		return true
	}
	return false
}

// withEnv is base (the runner's variables) followed by those of extra
// whose names base does not set: the runner's win, and no name appears
// twice (runtimes differ on which of two they read).
func withEnv(base, extra []string) []string {
	if len(extra) == 0 {
		return base
	}
	set := make(map[string]bool, len(base))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	out := slices.Clip(base)
	for _, kv := range extra {
		if k, _, _ := strings.Cut(kv, "="); !set[k] {
			set[k] = true
			out = append(out, kv)
		}
	}
	return out
}
