package auth

import (
	"fmt"
	"slices"
)

// Action is one thing a caller does in a workspace, through the API or the
// console. Both take the scope an action needs from Need, never a scope of
// their own, so a button and the API route it mirrors cannot drift apart
// (issue 14). The scopes are DESIGN §4's (docs/API.md "Scopes").
type Action string

// The actions of the API and the console.
const (
	// ActionRead reads jobs, logs, apps, sources, schedules and queue health.
	ActionRead Action = "read"
	// ActionRun enqueues a job: the API's run, the console's run form and
	// its "run again".
	ActionRun Action = "run"
	// ActionCancel cancels a waiting or running job.
	ActionCancel Action = "cancel"
	// ActionReopen runs a failed (or canceled) job again under its id.
	ActionReopen Action = "reopen"
	// ActionRequeue moves a waiting job to the catalog as it is now.
	ActionRequeue Action = "requeue"
	// ActionDeploy commits and syncs an app (POST …/apps/{app}/deploy).
	ActionDeploy Action = "deploy"
	// ActionAddSource creates or updates a source.
	ActionAddSource Action = "add-source"
	// ActionSyncSource syncs a source now.
	ActionSyncSource Action = "sync-source"
	// ActionHookSource asks for a sync from a push hook.
	ActionHookSource Action = "hook-source"
	// ActionCreateSchedule creates a schedule.
	ActionCreateSchedule Action = "create-schedule"
	// ActionEditSchedule changes a schedule (the console's enable and
	// disable are edits).
	ActionEditSchedule Action = "edit-schedule"
	// ActionDeleteSchedule deletes a schedule.
	ActionDeleteSchedule Action = "delete-schedule"
	// ActionWebhook triggers an action with a bearer token on the webhook
	// route.
	ActionWebhook Action = "webhook"
	// ActionWebhookSecret creates or rotates an action's webhook secret.
	ActionWebhookSecret Action = "webhook-secret"
	// ActionManageSinks creates, changes or deletes an event sink.
	ActionManageSinks Action = "manage-sinks"
	// ActionRevokeToken revokes an API token (an all-workspace scope).
	ActionRevokeToken Action = "revoke-token"
	// ActionSetSecret creates or replaces a workspace secret; ActionDeleteSecret
	// deletes one; ActionSecretAudit reads who changed which secret when.
	// Listing secrets (never a value) is ActionRead.
	ActionSetSecret    Action = "set-secret"
	ActionDeleteSecret Action = "delete-secret"
	ActionSecretAudit  Action = "secret-audit"
)

// needs is the one scope table. Token creation is not in it: the handler
// checks the scopes asked for against those the caller holds.
var needs = map[Action]Scope{
	ActionRead:           ScopeRead,
	ActionRun:            ScopeRun,
	ActionCancel:         ScopeRun,
	ActionReopen:         ScopeOperator,
	ActionRequeue:        ScopeRun,
	ActionDeploy:         ScopeAdmin,
	ActionAddSource:      ScopeAdmin,
	ActionSyncSource:     ScopeAdmin,
	ActionHookSource:     ScopeRun,
	ActionCreateSchedule: ScopeAdmin,
	ActionEditSchedule:   ScopeAdmin,
	ActionDeleteSchedule: ScopeAdmin,
	ActionWebhook:        ScopeWebhook,
	ActionWebhookSecret:  ScopeAdmin,
	ActionRevokeToken:    ScopeAdmin,
	ActionManageSinks:    ScopeAdmin,
	ActionSetSecret:      ScopeAdmin,
	ActionDeleteSecret:   ScopeAdmin,
	ActionSecretAudit:    ScopeAdmin,
}

// Need is the scope action requires. An action missing from the table is
// a programming error: it panics, so it shows at route registration (in
// every test), never as a route without a check.
func Need(a Action) Scope {
	s, ok := needs[a]
	if !ok {
		panic(fmt.Sprintf("auth: no scope for action %q", a))
	}
	return s
}

// Actions lists every action of the table, sorted, for the tests that
// check the API and the console against it.
func Actions() []Action {
	out := make([]Action, 0, len(needs))
	for a := range needs {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}
