package auth

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestAllows(t *testing.T) {
	t.Parallel()
	tok := Token{Workspace: "ws", Scopes: []Scope{ScopeAdmin}}
	cases := []struct {
		ws    string
		scope Scope
		want  bool
	}{
		{"ws", ScopeAdmin, true}, {"ws", ScopeRead, true}, {"ws", ScopeRun, true},
		{"ws", ScopeOperator, false}, {"other", ScopeRead, false},
	}
	for _, c := range cases {
		if got := tok.Allows(c.ws, c.scope); got != c.want {
			t.Errorf("admin token Allows(%q, %s) = %v, want %v", c.ws, c.scope, got, c.want)
		}
	}
	all := Token{Workspace: AllWorkspaces, Scopes: []Scope{ScopeRead}}
	if !all.Allows("any", ScopeRead) || all.Allows("any", ScopeRun) {
		t.Error("all-workspace read token")
	}
	if (Token{Workspace: "ws"}).Allows("ws", ScopeRead) {
		t.Error("a token without scopes allows something")
	}
}

func TestNewToken(t *testing.T) {
	t.Parallel()
	text, tok, err := NewToken("ws", "ci", []Scope{ScopeRun})
	if err != nil || tok.Hash != Hash(text) || len(tok.Hash) != 64 || tok.ID == "" || text == tok.Hash {
		t.Fatalf("NewToken: %q %+v %v", text, tok, err)
	}
	if _, _, err := NewToken("ws", "", []Scope{"root"}); err == nil {
		t.Fatal("unknown scope accepted")
	}
	if got := SplitScopes(JoinScopes([]Scope{ScopeRead, ScopeOperator})); len(got) != 2 || got[1] != ScopeOperator {
		t.Fatalf("scopes round trip %v", got)
	}
}

// TestMissing: a token grants only scopes it holds; admin never implies
// operator, the bootstrap admin token holds every scope.
func TestMissing(t *testing.T) {
	t.Parallel()
	admin := Token{Workspace: "ws", Scopes: []Scope{ScopeAdmin}}
	if s, lacks := admin.Missing("ws", []Scope{ScopeRead, ScopeRun, ScopeWebhook, ScopeAdmin}); lacks {
		t.Errorf("workspace admin lacks %s", s)
	}
	if s, lacks := admin.Missing("ws", []Scope{ScopeRun, ScopeOperator}); !lacks || s != ScopeOperator {
		t.Errorf("workspace admin granting operator: missing %q, lacks %v", s, lacks)
	}
	op := Token{Workspace: "ws", Scopes: []Scope{ScopeAdmin, ScopeOperator}}
	if _, lacks := op.Missing("ws", []Scope{ScopeOperator}); lacks {
		t.Error("operator token lacks operator")
	}
	if _, lacks := op.Missing(AllWorkspaces, []Scope{ScopeRead}); !lacks {
		t.Error("workspace token grants in every workspace")
	}
	boot := Bootstrap("")
	if s, lacks := boot.Missing(AllWorkspaces, []Scope{ScopeRead, ScopeRun, ScopeAdmin, ScopeOperator, ScopeWebhook}); lacks {
		t.Errorf("bootstrap admin lacks %s", s)
	}
}

// TestActor: tokens record "token:<id>", never the label, and no stored
// id can be the bootstrap admin's.
func TestActor(t *testing.T) {
	t.Parallel()
	_, tok, err := NewToken("ws", "schedule:x", []Scope{ScopeRun})
	if err != nil {
		t.Fatal(err)
	}
	if tok.Actor() != "token:"+tok.ID || CheckID(tok.ID) != nil {
		t.Fatalf("actor %q, CheckID %v", tok.Actor(), CheckID(tok.ID))
	}
	if id, ok := ActorTokenID(tok.Actor()); !ok || id != tok.ID {
		t.Fatalf("ActorTokenID(%q) = %q, %v", tok.Actor(), id, ok)
	}
	for _, a := range []string{"schedule:x", "job:1", "webhook", "token:", "admin"} {
		if _, ok := ActorTokenID(a); ok {
			t.Errorf("ActorTokenID(%q) is a token", a)
		}
	}
	for _, id := range []string{AdminID, "", "ABCD", "12 34", "schedule:x"} {
		if err := CheckID(id); !errors.Is(err, ErrInvalidID) {
			t.Errorf("CheckID(%q) = %v, want ErrInvalidID", id, err)
		}
	}
	if Bootstrap("").Actor() != "token:admin" {
		t.Fatalf("bootstrap actor %q", Bootstrap("").Actor())
	}
}

type lookup map[string]Token

func (l lookup) TokenByID(_ context.Context, id string) (Token, error) {
	if t, ok := l[id]; ok {
		return t, nil
	}
	return Token{}, ErrNotFound
}

// TestActorLabel: the label is found by the actor's token id, beside it.
func TestActorLabel(t *testing.T) {
	t.Parallel()
	l := lookup{"ab12": {ID: "ab12", Label: "ci-bot"}}
	for actor, want := range map[string]string{
		"token:ab12": "ci-bot", "token:admin": "admin", "token:ffff": "", "schedule:ab12": "", "job:x": "", "ci-bot": "",
	} {
		got, err := ActorLabel(t.Context(), l, actor)
		if err != nil || got != want {
			t.Errorf("ActorLabel(%q) = %q, %v; want %q", actor, got, err, want)
		}
	}
}

func TestSessionLive(t *testing.T) {
	t.Parallel()
	now := time.Now()
	s := Session{ExpiresAt: now.Add(time.Hour)}
	if !s.Live(now) || s.Live(now.Add(time.Hour)) {
		t.Fatal("expiry")
	}
	s.EndedAt = now
	if s.Live(now) {
		t.Fatal("an ended session is live")
	}
	text, hash, err := NewSessionID()
	if err != nil || Hash(text) != hash || len(text) != 64 {
		t.Fatalf("NewSessionID %q %q %v", text, hash, err)
	}
}
