package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/source"
)

// Push hooks from git hosts (DESIGN §10). A host cannot send a bearer
// token, so the hook also accepts the host's own proof, keyed by the
// source's hook secret: GitHub signs the raw body with HMAC-SHA256 and
// sends "sha256=<hex>"; Gitea and Forgejo send the bare hex of the same
// HMAC; GitLab sends the secret itself as a token.
const (
	GitHubSignatureHeader  = "X-Hub-Signature-256"
	GitHubEventHeader      = "X-GitHub-Event"
	GiteaSignatureHeader   = "X-Gitea-Signature"
	GiteaEventHeader       = "X-Gitea-Event"
	ForgejoSignatureHeader = "X-Forgejo-Signature"
	ForgejoEventHeader     = "X-Forgejo-Event"
	GitLabTokenHeader      = "X-Gitlab-Token"
	GitLabEventHeader      = "X-Gitlab-Event"
)

// hookRoute is what a bearer token needs on the push hook route.
var hookRoute = route{action: auth.ActionHookSource}

// errBadHookSignature answers a proof that does not match, and a source
// that is unknown or has no hook secret: an anonymous caller learns
// nothing about which sources exist.
var errBadHookSignature = errorf(http.StatusUnauthorized, CodeUnauthorized,
	"push hook signature does not match the source's hook secret (set it with PUT …/sources/{id}/hook-secret and in the git host's webhook)")

// hostHook is the proof a git host sent and the event it names.
type hostHook struct {
	host  string // "github", "gitea" or "gitlab"
	proof string // the signature or token header's value
	event string // the event header's value
}

// push is what the hook reads of a push payload; GitHub, GitLab, Gitea
// and Forgejo all name the pushed ref "ref" and its new head "after".
type push struct {
	Ref     string `json:"ref"`
	After   string `json:"after"`
	Deleted bool   `json:"deleted"`
}

// zeroSHA is the "after" of a push that deleted its ref.
const zeroSHA = "0000000000000000000000000000000000000000"

// serveHook is POST /api/w/{ws}/sources/{id}/hook: with a bearer token
// (run scope) the token is the proof and the body's ref chooses; without
// one the request must carry a git host's proof made with the source's
// hook secret.
func (s *Server) serveHook(w http.ResponseWriter, r *http.Request) {
	var v any
	var err error
	if r.Header.Get("Authorization") != "" {
		v, err = s.hookWithToken(w, r)
	} else {
		v, err = s.hookFromHost(w, r)
	}
	s.respond(w, r, v, err)
}

// hookWithToken is the hook as it was before git hosts' proofs: a token
// allowed the run scope in the path's workspace, and {"ref"}.
func (s *Server) hookWithToken(w http.ResponseWriter, r *http.Request) (any, error) {
	c, err := s.authenticate(r)
	if err != nil {
		return nil, err
	}
	if err := s.authorize(r, c, hookRoute); err != nil {
		return nil, err
	}
	return s.hookSource(w, r, c)
}

// hookFromHost checks the host's proof against the source's hook secret
// before it reads anything of the payload, then: ping is 200, any event
// other than a push is 202 ignored, a push to another ref or one that
// deleted the branch is 202 ignored, and a push to the source's branch
// syncs it through the one sync path and answers like sync. Every
// refusal of the proof is 401 and syncs nothing.
func (s *Server) hookFromHost(w http.ResponseWriter, r *http.Request) (any, error) {
	h, ok := hostProof(r.Header)
	if !ok {
		return nil, errorf(http.StatusUnauthorized, CodeUnauthorized,
			"missing bearer token, or a git host's %s, %s or %s", GitHubSignatureHeader, GitLabTokenHeader, GiteaSignatureHeader)
	}
	raw, err := readBody(w, r, s.cfg.MaxInputBytes)
	if err != nil {
		return nil, err
	}
	ws, id := r.PathValue("ws"), r.PathValue("id")
	src, err := s.cfg.Store.GetSource(r.Context(), ws, id)
	if errors.Is(err, catalog.ErrNotFound) {
		return nil, errBadHookSignature
	}
	if err != nil {
		return nil, err
	}
	if src.HookSecret == "" || !h.verify(src.HookSecret, raw) {
		return nil, errBadHookSignature
	}
	switch {
	case h.event == "":
		return nil, errorf(http.StatusBadRequest, CodeBadRequest, "push hook: no event header (%s, %s or %s)",
			GitHubEventHeader, GitLabEventHeader, GiteaEventHeader)
	case h.host == "github" && h.event == "ping":
		return map[string]any{"ping": "ok", "source": id}, nil
	case !h.isPush():
		return hookIgnored("event " + h.event + " is not a push"), nil
	}
	p, err := pushPayload(r.Header.Get("Content-Type"), raw)
	if err != nil {
		return nil, err
	}
	if p.Ref != "refs/heads/"+src.Branch {
		return hookIgnored("push to " + p.Ref + ", not to branch " + src.Branch), nil
	}
	if p.Deleted || p.After == zeroSHA {
		return hookIgnored("push deleted branch " + src.Branch), nil
	}
	res, err := s.cfg.Syncer.Hook(r.Context(), ws, id, p.Ref)
	if err != nil {
		return nil, err
	}
	if res.Ignored {
		// The source's branch changed between the read above and the sync.
		return hookIgnored("push to " + p.Ref + ", not to the source's branch"), nil
	}
	return s.syncResult(r, id, res)
}

// hostProof finds the git host's proof among the headers. Gitea also
// sends GitHub's headers, so its own are looked at first.
func hostProof(hdr http.Header) (hostHook, bool) {
	first := func(names ...string) string {
		for _, n := range names {
			if v := hdr.Get(n); v != "" {
				return v
			}
		}
		return ""
	}
	if sig := first(GiteaSignatureHeader, ForgejoSignatureHeader); sig != "" {
		return hostHook{host: "gitea", proof: sig, event: first(GiteaEventHeader, ForgejoEventHeader, GitHubEventHeader)}, true
	}
	if sig := hdr.Get(GitHubSignatureHeader); sig != "" {
		return hostHook{host: "github", proof: sig, event: hdr.Get(GitHubEventHeader)}, true
	}
	if tok := hdr.Get(GitLabTokenHeader); tok != "" {
		return hostHook{host: "gitlab", proof: tok, event: hdr.Get(GitLabEventHeader)}, true
	}
	return hostHook{}, false
}

// verify compares the proof with what secret makes of body, in constant
// time. GitLab's token is compared through SHA-256 digests, so neither
// its length nor a common prefix shows in the time taken.
func (h hostHook) verify(secret string, body []byte) bool {
	switch h.host {
	case "gitlab":
		a, b := sha256.Sum256([]byte(h.proof)), sha256.Sum256([]byte(secret))
		return hmac.Equal(a[:], b[:])
	case "github":
		hexSig, ok := strings.CutPrefix(h.proof, "sha256=")
		return ok && macEqual(secret, body, hexSig)
	default:
		return macEqual(secret, body, h.proof)
	}
}

// macEqual reports whether hexSig is the hex HMAC-SHA256 of body keyed by
// secret.
func macEqual(secret string, body []byte, hexSig string) bool {
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}

// isPush reports whether the event is a branch or tag push: "push" on
// GitHub, Gitea and Forgejo, "Push Hook" on GitLab (whose tag pushes are
// "Tag Push Hook", and are ignored by the ref check anyway).
func (h hostHook) isPush() bool {
	if h.host == "gitlab" {
		return h.event == "Push Hook"
	}
	return h.event == "push"
}

// pushPayload reads the push from a JSON body, or from the "payload" field
// of a form body (GitHub's and Gitea's application/x-www-form-urlencoded
// content type).
func pushPayload(contentType string, raw []byte) (push, error) {
	data := raw
	if mt, _, _ := mime.ParseMediaType(contentType); mt == "application/x-www-form-urlencoded" {
		form, err := url.ParseQuery(string(raw))
		if err != nil {
			return push{}, errorf(http.StatusBadRequest, CodeBadRequest, "push hook form body: %v", err)
		}
		data = []byte(form.Get("payload"))
	}
	var p push
	if err := json.Unmarshal(data, &p); err != nil {
		return push{}, errorf(http.StatusBadRequest, CodeBadRequest, "push hook payload: %v", err)
	}
	if p.Ref == "" {
		return push{}, errorf(http.StatusBadRequest, CodeBadRequest, "push hook payload has no \"ref\"")
	}
	return p, nil
}

// hookIgnored is the 202 of a hook that was authentic but asks for no
// sync.
func hookIgnored(reason string) *reply {
	return &reply{status: http.StatusAccepted, body: map[string]any{"ignored": true, "reason": reason}}
}

// putHookSecret is PUT /api/w/{ws}/sources/{id}/hook-secret (admin):
// {"hook_secret":"…"} sets or rotates the secret git hosts sign the
// source's push hook with, "" clears it; the old one stops working at
// once. A refused secret is 422 and nothing is written; an unknown source
// is 404. It answers the source.
func (s *Server) putHookSecret(w http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	var body struct {
		HookSecret *string `json:"hook_secret"`
	}
	if err := decodeOptional(w, r, s.cfg.MaxInputBytes, &body); err != nil {
		return nil, err
	}
	if body.HookSecret == nil {
		return nil, errorf(http.StatusUnprocessableEntity, CodeInvalidInput, "want {\"hook_secret\":\"…\"} (\"\" clears it)")
	}
	ws, id := r.PathValue("ws"), r.PathValue("id")
	if err := s.cfg.Syncer.SetHookSecret(r.Context(), ws, id, *body.HookSecret); err != nil {
		if re := (*source.RefusedError)(nil); errors.As(err, &re) {
			return nil, &Error{Status: http.StatusUnprocessableEntity, Code: CodeInvalidInput, Message: re.Error(), Err: err}
		}
		return nil, err
	}
	got, err := s.cfg.Store.GetSource(r.Context(), ws, id)
	if err != nil {
		return nil, err
	}
	return source.ViewOf(got), nil
}
