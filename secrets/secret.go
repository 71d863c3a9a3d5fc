package secrets

import (
	"time"

	"github.com/windforce/windforce/spine"
)

// ErrNotFound means the workspace has no secret of that name.
var ErrNotFound = spine.NotFound("secret not found")

// Secret is a secret as listed: everything but its value (the API's
// listing shape, DESIGN §8).
type Secret struct {
	// Workspace and Name identify the secret.
	Workspace, Name string
	// Description is the admin's note on what the secret is for.
	Description string
	// Version counts the values set under the name, from 1; it is never
	// reused for the name, even after a delete and a new create.
	Version int64
	// UpdatedAt and UpdatedBy say when and by whom the current value was
	// set (an actor as the audit records it, "token:<id>").
	UpdatedAt time.Time
	UpdatedBy string
}

// Sealed is the current ciphertext of one secret, what a worker opens at
// claim (with Open and the row's workspace, Name and Version).
type Sealed struct {
	Name       string
	Version    int64
	Ciphertext []byte
	// KeyID is the ID of the key that sealed Ciphertext.
	KeyID string
}

// Put is a request to create or replace a secret.
type Put struct {
	Workspace, Name, Description string
	// Value is the plaintext; the store seals it and keeps only that.
	Value []byte
	// Actor is who sets it, as the audit records it.
	Actor string
	// Now is the time recorded; zero is the database's clock.
	Now time.Time
}

// Action is what an audit entry records.
type Action string

// The audited actions.
const (
	ActionCreate  Action = "create"
	ActionReplace Action = "replace"
	ActionDelete  Action = "delete"
)

// AuditEntry is one change of a secret: who did what to which version when.
type AuditEntry struct {
	// ID orders the entries of a store (newer is larger); it is the
	// cursor of the audit list.
	ID              int64
	Workspace, Name string
	Action          Action
	// Version is the version created or replaced to, or the one deleted.
	Version int64
	Actor   string
	At      time.Time
}

// Rotation is what one rotate-key run did.
type Rotation struct {
	// Resealed counts the rows re-encrypted from the old key to the new.
	Resealed int
	// Foreign lists the rows sealed with neither key ("workspace/name
	// (key ID)"); they are left as they are.
	Foreign []string
}
