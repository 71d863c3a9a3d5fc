package secrets

import "context"

// Store keeps the secrets of every workspace, sealed (the store core,
// package store, implements it over both databases). The API, the
// console and the CLI's rotate-key use it; no method returns a value.
type Store interface {
	// PutSecret validates p (ValidName, ValidValue, ValidDescription),
	// seals its value with key as a new version and audits the create or
	// replace in the same transaction; created says which it was.
	PutSecret(ctx context.Context, key Key, p Put) (s Secret, created bool, err error)
	// ListSecrets lists a workspace's secrets by name.
	ListSecrets(ctx context.Context, workspace string) ([]Secret, error)
	// DeleteSecret deletes one and audits it; ErrNotFound when there is none.
	DeleteSecret(ctx context.Context, workspace, name, actor string) error
	// SecretAudit lists a workspace's audit newest first, limit entries
	// older than the cursor before (0: the newest); next is the cursor of
	// the following page, 0 at the end.
	SecretAudit(ctx context.Context, workspace string, before int64, limit int) (entries []AuditEntry, next int64, err error)
	// SecretsSealed returns the current sealed rows of those names that
	// exist, by name.
	SecretsSealed(ctx context.Context, workspace string, names []string) ([]Sealed, error)
}
