package auth

import "testing"

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
