package source

import (
	"context"
	"fmt"
	"strings"
	"unicode"
)

// Bounds of a hook secret. Sixteen characters is the least that resists
// guessing; the upper bound keeps a pasted file out of a header.
const (
	MinHookSecret = 16
	MaxHookSecret = 1024
)

// CheckHookSecret refuses, with a *RefusedError, a push hook secret a git
// host could not send back as typed: shorter than MinHookSecret or longer
// than MaxHookSecret, with control characters (not valid in GitLab's
// X-Gitlab-Token header), or with leading or trailing spaces (HTTP trims
// them from a header, so GitLab's token would never match).
func CheckHookSecret(secret string) error {
	refuse := func(why string) error {
		return &RefusedError{Reason: "hook secret: " + why}
	}
	switch {
	case len(secret) < MinHookSecret || len(secret) > MaxHookSecret:
		return refuse(fmt.Sprintf("want %d to %d characters, got %d (try `openssl rand -hex 32`)", MinHookSecret, MaxHookSecret, len(secret)))
	case strings.TrimSpace(secret) != secret:
		return refuse("leading or trailing spaces would be trimmed from the hosts' headers")
	case strings.ContainsFunc(secret, unicode.IsControl):
		return refuse("control characters cannot be sent in a header")
	}
	return nil
}

// SetHookSecret checks secret (CheckHookSecret; "" clears it) and makes it
// the source's push hook secret. An unknown source is catalog.ErrNotFound;
// a refused secret is a *RefusedError and nothing is written.
func (s *Syncer) SetHookSecret(ctx context.Context, workspace, id, secret string) error {
	if secret != "" {
		if err := CheckHookSecret(secret); err != nil {
			return err
		}
	}
	if err := s.Catalog.SetHookSecret(ctx, workspace, id, secret); err != nil {
		return fmt.Errorf("set hook secret of %s/%s: %w", workspace, id, err)
	}
	return nil
}
