package spine

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Limits of a pinned environment (DESIGN §3): what a manifest may declare
// and an enqueue may pin.
const (
	// MaxEnvVars bounds the variables of one job's environment.
	MaxEnvVars = 100
	// MaxEnvNameLen bounds one variable's name.
	MaxEnvNameLen = 128
	// MaxEnvLiteralBytes bounds the literal values of one environment
	// together (secret values are not counted: they are not in the pin).
	MaxEnvLiteralBytes = 32 << 10
	// ReservedEnvPrefix starts the names the runner sets itself (WF_TOKEN,
	// WF_INPUT …); an environment may not set them.
	ReservedEnvPrefix = "WF_"
)

var (
	envNamePattern    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	secretNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
)

// EnvNameProblem says what is wrong with an environment variable's name,
// "" when nothing is.
func EnvNameProblem(name string) string {
	switch {
	case len(name) > MaxEnvNameLen:
		return fmt.Sprintf("name %.20q… is longer than %d characters", name, MaxEnvNameLen)
	case !envNamePattern.MatchString(name):
		return fmt.Sprintf("name %q is not a variable name (letters, digits and _, not starting with a digit)", name)
	case strings.HasPrefix(strings.ToUpper(name), ReservedEnvPrefix):
		return fmt.Sprintf("name %q is reserved: names starting with %s are set by the runner", name, ReservedEnvPrefix)
	}
	return ""
}

// ValidSecretName reports whether name is a workspace secret's name
// (DESIGN §8: ^[A-Za-z_][A-Za-z0-9_]{0,63}$).
func ValidSecretName(name string) bool {
	return secretNamePattern.MatchString(name)
}

// SecretNames are the secrets env refers to, sorted, once each: what a
// job's claim resolves and what its enqueue requires to exist.
func SecretNames(env []EnvVar) []string {
	var names []string
	for _, v := range env {
		if v.Secret != "" {
			names = append(names, v.Secret)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// CheckEnv checks a pin's environment as PrepareEnqueue does: names valid
// and distinct, sorted by name, never both a Value and a Secret (a
// variable without a Secret is a literal, "" included), at
// most MaxEnvVars variables and MaxEnvLiteralBytes of literals, no NUL. A
// manifest is checked the same way when it is loaded, with each problem
// named by its field; this guards the other callers (a library user's own
// pin).
func CheckEnv(env []EnvVar) error {
	if len(env) > MaxEnvVars {
		return fmt.Errorf("%w: env has %d variables, at most %d", ErrInvalid, len(env), MaxEnvVars)
	}
	total := 0
	for i, v := range env {
		if p := EnvNameProblem(v.Name); p != "" {
			return fmt.Errorf("%w: env: %s", ErrInvalid, p)
		}
		if i > 0 && env[i-1].Name >= v.Name {
			return fmt.Errorf("%w: env is not sorted by name with each name once (%q after %q)", ErrInvalid, v.Name, env[i-1].Name)
		}
		if v.Value != "" && v.Secret != "" {
			return fmt.Errorf("%w: env %s has both a value and a secret", ErrInvalid, v.Name)
		}
		if v.Secret != "" && !ValidSecretName(v.Secret) {
			return fmt.Errorf("%w: env %s names secret %q, which is not a secret name", ErrInvalid, v.Name, v.Secret)
		}
		if strings.IndexByte(v.Value, 0) >= 0 {
			return fmt.Errorf("%w: env %s holds the NUL character", ErrInvalid, v.Name)
		}
		total += len(v.Value)
	}
	if total > MaxEnvLiteralBytes {
		return fmt.Errorf("%w: env literals are %d bytes together, at most %d", ErrInvalid, total, MaxEnvLiteralBytes)
	}
	return nil
}

// CheckWarm checks a pin's warm policy: nil (cold), or at least one job
// per process and a positive idle time.
func CheckWarm(w *Warm) error {
	if w == nil {
		return nil
	}
	if w.MaxJobs < 1 || w.Idle <= 0 {
		return fmt.Errorf("%w: warm needs max_jobs ≥ 1 and a positive idle (got %d, %s)", ErrInvalid, w.MaxJobs, w.Idle)
	}
	return nil
}

// SortEnv sorts env by name in place and returns it; nil for an empty one,
// the pin's form of "no environment".
func SortEnv(env []EnvVar) []EnvVar {
	if len(env) == 0 {
		return nil
	}
	slices.SortFunc(env, func(a, b EnvVar) int { return strings.Compare(a.Name, b.Name) })
	return env
}

// EnvColumn is env as the stores' nullable env column: the JSON text of
// the sorted list, nil (NULL) when empty. The encoding is deterministic,
// so two pins with the same environment have the same column and
// coalescing compares them as text.
func EnvColumn(env []EnvVar) *string {
	if len(env) == 0 {
		return nil
	}
	b, err := json.Marshal(env)
	if err != nil {
		panic(fmt.Sprintf("encode env: %v", err)) // strings only: cannot fail
	}
	s := string(b)
	return &s
}

// ParseEnvColumn reads an env column back; NULL is nil.
func ParseEnvColumn(col *string) ([]EnvVar, error) {
	if col == nil {
		return nil, nil
	}
	var env []EnvVar
	if err := json.Unmarshal([]byte(*col), &env); err != nil {
		return nil, fmt.Errorf("read pinned env: %w", err)
	}
	return SortEnv(env), nil
}

// warmColumn is a warm policy as stored: idle in milliseconds, like every
// other duration column.
type warmColumn struct {
	MaxJobs int   `json:"max_jobs"`
	IdleMS  int64 `json:"idle_ms"`
}

// WarmColumn is w as the stores' nullable warm column: JSON text
// ({"max_jobs":1000,"idle_ms":300000}), nil (NULL) for a cold job.
func WarmColumn(w *Warm) *string {
	if w == nil {
		return nil
	}
	b, err := json.Marshal(warmColumn{MaxJobs: w.MaxJobs, IdleMS: w.Idle.Milliseconds()})
	if err != nil {
		panic(fmt.Sprintf("encode warm: %v", err)) // numbers only: cannot fail
	}
	s := string(b)
	return &s
}

// ParseWarmColumn reads a warm column back; NULL is nil (cold).
func ParseWarmColumn(col *string) (*Warm, error) {
	if col == nil {
		return nil, nil
	}
	var c warmColumn
	if err := json.Unmarshal([]byte(*col), &c); err != nil {
		return nil, fmt.Errorf("read pinned warm: %w", err)
	}
	return &Warm{MaxJobs: c.MaxJobs, Idle: time.Duration(c.IdleMS) * time.Millisecond}, nil
}
