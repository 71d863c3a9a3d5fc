package server

import "github.com/windforce/windforce/spine"

// EnvView is a pinned environment as the manifest writes it: each name to
// its literal value ("eu-west-1") or to the secret it names
// ({"secret":"slack_token"}). A pin holds no secret's value, so neither
// does the view.
type EnvView map[string]any

// SecretRef is a variable that takes a workspace secret's value at claim.
type SecretRef struct {
	Secret string `json:"secret"`
}

// viewEnv renders env; nil (omitted) when there is none.
func viewEnv(env []spine.EnvVar) EnvView {
	if len(env) == 0 {
		return nil
	}
	v := make(EnvView, len(env))
	for _, e := range env {
		if e.Secret != "" {
			v[e.Name] = SecretRef{Secret: e.Secret}
		} else {
			v[e.Name] = e.Value
		}
	}
	return v
}

// WarmView is a warm-runtime policy with idle as duration text ("5m0s"),
// like every other duration of the API.
type WarmView struct {
	MaxJobs int    `json:"max_jobs"`
	Idle    string `json:"idle"`
}

// viewWarm renders w; nil (omitted) for a cold job.
func viewWarm(w *spine.Warm) *WarmView {
	if w == nil {
		return nil
	}
	return &WarmView{MaxJobs: w.MaxJobs, Idle: w.Idle.String()}
}
