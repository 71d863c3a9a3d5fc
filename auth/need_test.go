package auth_test

import (
	"testing"

	"github.com/windforce/windforce/auth"
)

// TestNeedKeepsTheDocumentedScopes pins the scope table to docs/API.md
// "Scopes" and docs/CONSOLE.md: moving the console and the API onto one
// table changed no scope.
func TestNeedKeepsTheDocumentedScopes(t *testing.T) {
	t.Parallel()
	want := map[auth.Action]auth.Scope{
		auth.ActionRead: auth.ScopeRead, auth.ActionRun: auth.ScopeRun, auth.ActionCancel: auth.ScopeRun,
		auth.ActionReopen: auth.ScopeOperator, auth.ActionRequeue: auth.ScopeRun, auth.ActionDeploy: auth.ScopeAdmin,
		auth.ActionAddSource: auth.ScopeAdmin, auth.ActionSyncSource: auth.ScopeAdmin, auth.ActionHookSource: auth.ScopeRun,
		auth.ActionCreateSchedule: auth.ScopeAdmin, auth.ActionEditSchedule: auth.ScopeAdmin,
		auth.ActionDeleteSchedule: auth.ScopeAdmin, auth.ActionWebhook: auth.ScopeWebhook,
		auth.ActionWebhookSecret: auth.ScopeAdmin, auth.ActionRevokeToken: auth.ScopeAdmin,
		auth.ActionManageSinks: auth.ScopeAdmin,
		auth.ActionSetSecret:   auth.ScopeAdmin, auth.ActionDeleteSecret: auth.ScopeAdmin, auth.ActionSecretAudit: auth.ScopeAdmin,
	}
	got := auth.Actions()
	if len(got) != len(want) {
		t.Fatalf("table has %d actions %v, want %d", len(got), got, len(want))
	}
	for _, a := range got {
		if s := auth.Need(a); s != want[a] || !s.Valid() {
			t.Errorf("Need(%s) = %q, want %q", a, s, want[a])
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Need of an unknown action did not panic")
		}
	}()
	auth.Need("no-such-action")
}
