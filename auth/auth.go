// Package auth holds the API token model of the windforce server: scopes,
// the token record the stores keep (hashed), and the small Store interface
// that the store core (package store) implements beside spine.Store.
//
// A token is random text shown once at creation; the database only holds
// its hex SHA-256, so a copy of the database grants nothing. Access is
// denied by default: a request passes only with a live token whose
// workspace and scopes cover it. Revocation marks the row and is seen by
// the next request (tokens are looked up on every request, never cached).
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/windforce/windforce/spine"
)

// ErrNotFound means no live token has that hash or id (unknown or
// revoked). It matches spine.ErrNotFound too.
var ErrNotFound = spine.NotFound("token not found")

// ErrInvalidID refuses a token record whose id NewToken could not have
// drawn: ids are lowercase hex, so no stored token can take the
// bootstrap admin's id (AdminID) and pass for it in the audit.
var ErrInvalidID = errors.New("token id must be lowercase hex")

// Scope is one permission a token grants in its workspace.
type Scope string

// The closed set of scopes (DESIGN §4).
const (
	// ScopeRead reads jobs, logs, sources, apps and queue health.
	ScopeRead Scope = "read"
	// ScopeRun enqueues and cancels jobs.
	ScopeRun Scope = "run"
	// ScopeAdmin manages sources (add, sync) and creates tokens.
	ScopeAdmin Scope = "admin"
	// ScopeOperator reopens finished jobs.
	ScopeOperator Scope = "operator"
	// ScopeWebhook triggers actions on the webhook route only, so a token
	// handed to a third-party sender can do nothing else.
	ScopeWebhook Scope = "webhook"
)

// AllWorkspaces is the workspace of a token valid in every workspace.
const AllWorkspaces = "*"

// Valid reports whether s is a known scope.
func (s Scope) Valid() bool {
	switch s {
	case ScopeRead, ScopeRun, ScopeAdmin, ScopeOperator, ScopeWebhook:
		return true
	}
	return false
}

// AdminID is the id of the bootstrap admin token (WINDFORCE_ADMIN_TOKEN),
// which has no stored row; its actor is "token:admin". Stored ids are hex
// (CheckID), so none can be "admin".
const AdminID = "admin"

// ActorPrefix starts the audit identity of an API token: created_by,
// canceled_by and audit actors record "token:<id>", never the label,
// which is free text its creator chose (a label "schedule:x" must not
// pass for the scheduler). Jobs ("job:<id>"), schedules ("schedule:<id>")
// and signed webhooks ("webhook") record their own prefixes.
const ActorPrefix = "token:"

// Token is a stored API token without its secret text.
type Token struct {
	ID string
	// Hash is the hex SHA-256 of the token text.
	Hash      string
	Workspace string
	Scopes    []Scope
	Label     string
	CreatedAt time.Time
	// RevokedAt is when the token was revoked; zero while it is live.
	// Only TokenByID returns revoked tokens.
	RevokedAt time.Time
}

// Bootstrap is the bootstrap admin token as a record: every scope in
// every workspace, id AdminID. hash is the hash of its text, if known.
func Bootstrap(hash string) Token {
	return Token{ID: AdminID, Label: "admin", Hash: hash, Workspace: AllWorkspaces,
		Scopes: []Scope{ScopeRead, ScopeRun, ScopeAdmin, ScopeOperator, ScopeWebhook}}
}

// Actor is what job rows and the audit record for t: "token:<id>".
func (t Token) Actor() string { return ActorPrefix + t.ID }

// ActorTokenID returns the token id of an actor "token:<id>"; ok is
// false for any other actor (a job, a schedule, a webhook).
func ActorTokenID(actor string) (id string, ok bool) {
	id, ok = strings.CutPrefix(actor, ActorPrefix)
	return id, ok && id != ""
}

// CheckID refuses an id NewToken could not have drawn (ErrInvalidID):
// the stores call it before storing a token.
func CheckID(id string) error {
	if id == "" || strings.Trim(id, "0123456789abcdef") != "" {
		return fmt.Errorf("token id %q: %w", id, ErrInvalidID)
	}
	return nil
}

// Missing returns the first of scopes that t does not hold in workspace
// (by Allows) with lacks true; lacks is false when t holds them all. A
// token may grant only what it holds: an admin holds read, run and
// webhook but never operator, so only an operator (or the bootstrap admin
// token) mints operator.
func (t Token) Missing(workspace string, scopes []Scope) (missing Scope, lacks bool) {
	for _, s := range scopes {
		if !t.Allows(workspace, s) {
			return s, true
		}
	}
	return "", false
}

// Allows reports whether t grants scope in workspace. Deny by default: a
// token grants only the scopes it lists, in its own workspace (or every
// workspace for AllWorkspaces); admin also grants read and run, and run
// (or admin) grants webhook.
func (t Token) Allows(workspace string, scope Scope) bool {
	if t.Workspace != AllWorkspaces && t.Workspace != workspace {
		return false
	}
	if slices.Contains(t.Scopes, scope) {
		return true
	}
	if scope == ScopeWebhook && slices.Contains(t.Scopes, ScopeRun) {
		return true
	}
	return (scope == ScopeRead || scope == ScopeRun || scope == ScopeWebhook) && slices.Contains(t.Scopes, ScopeAdmin)
}

// Store keeps API tokens. The store core (package store) implements it.
type Store interface {
	// CreateToken stores t (its hash, never its text).
	CreateToken(ctx context.Context, t Token) error
	// TokenByHash returns the live token with that hash; ErrNotFound for
	// an unknown or revoked one.
	TokenByHash(ctx context.Context, hash string) (Token, error)
	// TokenByID returns the token with that id, revoked or not (RevokedAt
	// says), so a job's audit identity "token:<id>" can show the label of
	// a token revoked since; ErrNotFound when there is none.
	TokenByID(ctx context.Context, id string) (Token, error)
	// RevokeToken refuses the token from the next request on and ends its
	// console sessions in the same transaction; ErrNotFound when there is
	// no live token with that id.
	RevokeToken(ctx context.Context, id string) error
	SessionStore
	// LeaseLive reports whether the job is running in workspace under
	// claimToken right now: a WF_TOKEN is honored only while its claim is
	// the job's live lease.
	LeaseLive(ctx context.Context, workspace string, jobID, claimToken uuid.UUID) (bool, error)
}

// tokenPrefix marks windforce API tokens so they are easy to spot in a
// secret scanner and never confused with a WF_TOKEN ("wf1.").
const tokenPrefix = "wft_"

// NewToken returns a fresh token text and its record (id, hash, scopes).
func NewToken(workspace, label string, scopes []Scope) (string, Token, error) {
	if workspace == "" {
		return "", Token{}, fmt.Errorf("new token: workspace is required")
	}
	if len(scopes) == 0 {
		return "", Token{}, fmt.Errorf("new token: at least one scope is required")
	}
	for _, s := range scopes {
		if !s.Valid() {
			return "", Token{}, fmt.Errorf("new token: unknown scope %q (want read, run, admin, operator or webhook)", s)
		}
	}
	// The id is drawn apart from the secret: it is shown and logged, so it
	// must say nothing about the token's text.
	var b [32]byte
	var id [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", Token{}, fmt.Errorf("new token: %w", err)
	}
	if _, err := rand.Read(id[:]); err != nil {
		return "", Token{}, fmt.Errorf("new token: %w", err)
	}
	text := tokenPrefix + hex.EncodeToString(b[:])
	return text, Token{ID: hex.EncodeToString(id[:]), Hash: Hash(text), Workspace: workspace,
		Scopes: slices.Clone(scopes), Label: label}, nil
}

// Hash is the stored form of a token's text: hex SHA-256.
func Hash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// JoinScopes is the stored form of a scope list: comma separated.
func JoinScopes(scopes []Scope) string {
	parts := make([]string, len(scopes))
	for i, s := range scopes {
		parts[i] = string(s)
	}
	return strings.Join(parts, ",")
}

// SplitScopes reads a stored scope list.
func SplitScopes(s string) []Scope {
	var out []Scope
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, Scope(p))
		}
	}
	return out
}
