package cli

import (
	"context"
	"io"
	"strings"

	"github.com/windforce/windforce/server"
)

// apiApp is one app of the catalog as GET …/apps answers it.
type apiApp = server.AppView

// runApps dispatches `windforce apps list`.
func runApps(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "ls") {
		return &UsageError{Msg: "usage: windforce apps list"}
	}
	var out struct {
		Apps []apiApp `json:"apps"`
	}
	cf, raw, err := listCommand(ctx, "apps", args[1:], stderr, &out)
	if err != nil {
		return err
	}
	if cf.json {
		printJSON(stdout, raw)
		return nil
	}
	t := newTable(stdout, "APP", "ACTIONS", "RUNTIME", "TAG", "SOURCE", "COMMIT", "UPDATED")
	for _, a := range out.Apps {
		actions := make([]string, 0, len(a.Actions))
		for _, act := range a.Actions {
			actions = append(actions, act.Action)
		}
		t.row(a.App, strings.Join(actions, ","), a.Runtime, a.Tag, a.Source, shortSHA(a.CommitSHA), fmtTime(&a.UpdatedAt))
	}
	return t.flush()
}
