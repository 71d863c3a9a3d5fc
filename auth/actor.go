package auth

import (
	"context"
	"errors"
	"fmt"
)

// TokenLookup is the part of Store that ActorLabel needs.
type TokenLookup interface {
	TokenByID(ctx context.Context, id string) (Token, error)
}

// ActorLabel is the label of the token behind actor ("token:<id>"), for
// showing beside the audit identity, never in its place. It is "" for
// other actors, a token without a label and an id no token has; the
// bootstrap admin's is "admin". A revoked token keeps its label.
func ActorLabel(ctx context.Context, st TokenLookup, actor string) (string, error) {
	id, ok := ActorTokenID(actor)
	if !ok {
		return "", nil
	}
	if id == AdminID {
		return Bootstrap("").Label, nil
	}
	t, err := st.TokenByID(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("label of %s: %w", actor, err)
	}
	return t.Label, nil
}
