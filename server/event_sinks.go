package server

import (
	"errors"
	"net/http"
	"time"

	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/source"
)

// SinkView is the event sink shape of the API (DESIGN §9). The webhook
// secret is never shown: secret_set says there is one, and the create
// that generated it answers it once in "secret".
type SinkView struct {
	ID        string    `json:"id"`
	Workspace string    `json:"workspace"`
	Kind      string    `json:"kind"`
	URL       string    `json:"url"`
	Subject   string    `json:"subject"`
	Types     []string  `json:"types"`
	Enabled   bool      `json:"enabled"`
	SecretSet bool      `json:"secret_set"`
	CreatedBy string    `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Secret is set only in the answer of the create that generated it.
	Secret string `json:"secret,omitempty"`
}

// viewSink shows a sink with its URL's credentials and query redacted
// (a reader may see sinks; a NATS password or a receiver's token in the
// query is not theirs to see).
func viewSink(sk sink.Sink) SinkView {
	types := sk.Types
	if types == nil {
		types = []string{}
	}
	return SinkView{ID: sk.ID, Workspace: sk.Workspace, Kind: string(sk.Kind), URL: source.Redact(sk.URL),
		Subject: sk.Subject, Types: types, Enabled: sk.Enabled, SecretSet: sk.Secret != "",
		CreatedBy: sk.CreatedBy, CreatedAt: sk.CreatedAt, UpdatedAt: sk.UpdatedAt}
}

// sinkError answers a refused sink 422 with its reason; other errors pass.
func sinkError(err error) error {
	if errors.Is(err, sink.ErrInvalid) {
		return &Error{Status: http.StatusUnprocessableEntity, Code: CodeInvalidInput, Message: err.Error(), Err: err}
	}
	return err
}

// createSink answers 201 with the stored sink, and its secret when this
// create generated it (the only time it is shown).
func (s *Server) createSink(w http.ResponseWriter, r *http.Request, c *caller) (any, error) {
	var b struct {
		ID      string   `json:"id"`
		Kind    string   `json:"kind"`
		URL     string   `json:"url"`
		Subject string   `json:"subject"`
		Types   []string `json:"types"`
		Secret  string   `json:"secret"`
	}
	if err := decodeOptional(w, r, s.cfg.MaxInputBytes, &b); err != nil {
		return nil, err
	}
	sk, err := s.cfg.Store.CreateSink(r.Context(), sink.Sink{
		Workspace: r.PathValue("ws"), ID: b.ID, Kind: sink.Kind(b.Kind), URL: b.URL,
		Subject: b.Subject, Types: b.Types, Secret: b.Secret, CreatedBy: c.name(),
	})
	if err != nil {
		return nil, sinkError(err)
	}
	v := viewSink(sk)
	if b.Secret == "" {
		v.Secret = sk.Secret
	}
	return &reply{status: http.StatusCreated, body: v}, nil
}

// listSinks answers {"sinks":[…]}, oldest first.
func (s *Server) listSinks(_ http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	list, err := s.cfg.Store.ListSinks(r.Context(), r.PathValue("ws"))
	if err != nil {
		return nil, err
	}
	out := make([]SinkView, 0, len(list))
	for _, sk := range list {
		out = append(out, viewSink(sk))
	}
	return map[string]any{"sinks": out}, nil
}

// getSink answers one sink.
func (s *Server) getSink(_ http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	sk, err := s.cfg.Store.GetSink(r.Context(), r.PathValue("ws"), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return viewSink(sk), nil
}

// patchSink changes url, subject, types, enabled or secret; a field left
// out stays. At least one is required.
func (s *Server) patchSink(w http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	var b struct {
		URL     *string   `json:"url"`
		Subject *string   `json:"subject"`
		Types   *[]string `json:"types"`
		Enabled *bool     `json:"enabled"`
		Secret  *string   `json:"secret"`
	}
	if err := decodeOptional(w, r, s.cfg.MaxInputBytes, &b); err != nil {
		return nil, err
	}
	if b.URL == nil && b.Subject == nil && b.Types == nil && b.Enabled == nil && b.Secret == nil {
		return nil, errorf(http.StatusBadRequest, CodeBadRequest, "request body: give at least one of url, subject, types, enabled, secret")
	}
	sk, err := s.cfg.Store.UpdateSink(r.Context(), r.PathValue("ws"), r.PathValue("id"), sink.Patch{
		URL: b.URL, Subject: b.Subject, Types: b.Types, Enabled: b.Enabled, Secret: b.Secret,
	})
	if err != nil {
		return nil, sinkError(err)
	}
	return viewSink(sk), nil
}

// deleteSink removes a sink and its deliveries: 204.
func (s *Server) deleteSink(_ http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	if err := s.cfg.Store.DeleteSink(r.Context(), r.PathValue("ws"), r.PathValue("id")); err != nil {
		return nil, err
	}
	return &reply{status: http.StatusNoContent}, nil
}
