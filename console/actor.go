package console

import (
	"context"

	"github.com/windforce/windforce/auth"
)

// actorNames resolves the labels of the token actors among actors
// ("token:<id>") and returns how the job page names any of them: the
// audit identity, with the label beside it, never in its place.
func (c *Console) actorNames(ctx context.Context, actors ...string) (func(string) string, error) {
	labels := map[string]string{}
	for _, a := range actors {
		if _, done := labels[a]; done {
			continue
		}
		l, err := auth.ActorLabel(ctx, c.cfg.Store, a)
		if err != nil {
			return nil, err
		}
		labels[a] = l
	}
	return func(a string) string { return withLabel(a, labels[a]) }, nil
}

// withLabel is "token:ab12 (label: ci-bot)", or the actor alone when it
// has no label.
func withLabel(actor, label string) string {
	if label == "" {
		return actor
	}
	return actor + " (label: " + label + ")"
}
