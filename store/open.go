package store

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

// DefaultURL is the database of `windforce dev`: an embedded SQLite file.
const DefaultURL = "sqlite://./.windforce/windforce.db"

// Open opens the store a URL names: postgres://… (or postgresql://…) or
// sqlite://PATH. It does not migrate.
func Open(ctx context.Context, url string, log *slog.Logger) (*Store, error) {
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		s, err := postgres.Open(ctx, url, postgres.Options{Logger: log})
		if err != nil {
			return nil, fmt.Errorf("open postgres store: %w", err)
		}
		return New(s), nil
	case strings.HasPrefix(url, "sqlite://"):
		s, err := sqlite.Open(ctx, strings.TrimPrefix(url, "sqlite://"), sqlite.Options{Logger: log})
		if err != nil {
			return nil, fmt.Errorf("open sqlite store: %w", err)
		}
		return New(s), nil
	}
	return nil, fmt.Errorf("database URL %q: want postgres://… or sqlite://PATH", redact(url))
}

// redact hides a password in a URL for error messages.
func redact(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return url
	}
	userinfo, host, ok := strings.Cut(rest, "@")
	if !ok {
		return url
	}
	if user, _, hasPass := strings.Cut(userinfo, ":"); hasPass {
		return scheme + "://" + user + ":xxxxx@" + host
	}
	return url
}
