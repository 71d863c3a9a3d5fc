package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/windforce/windforce/server"
)

// apiSource is the source shape of DESIGN §4.
type apiSource = server.SourceView

const sourcesUsage = `usage: windforce sources add|list|sync …
  sources add ID URL [--branch B]
  sources list
  sources sync ID`

// runSources dispatches `windforce sources SUBCOMMAND`.
func runSources(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return dispatch(ctx, "sources", sourcesUsage, map[string]subcommand{
		"add": sourcesAdd, "list": sourcesList, "ls": sourcesList, "sync": sourcesSync,
	}, args, stdout, stderr)
}

// sourcesAdd is `sources add ID URL [--branch B]`; it does not sync.
func sourcesAdd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cf := newClientFlags("sources add", stderr)
	branch := fs.String("branch", "main", "branch to sync")
	pos, err := parseArgs(fs, args, 2, 2, "ID URL [--branch B]")
	if err != nil {
		return err
	}
	c, err := cf.newClient()
	if err != nil {
		return err
	}
	var src apiSource
	_, raw, err := c.callJSON(ctx, request{method: http.MethodPost, path: c.ws("sources"),
		body: jsonBody(map[string]string{"id": pos[0], "url": pos[1], "branch": *branch})}, &src)
	if err != nil {
		return fmt.Errorf("add source %s: %w", pos[0], err)
	}
	if cf.json {
		printJSON(stdout, raw)
		return nil
	}
	fmt.Fprintf(stdout, "source %s added (%s, branch %s); sync it with: windforce sources sync %s\n", src.ID, src.URL, src.Branch, src.ID)
	return nil
}

// sourcesList is `sources list`.
func sourcesList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var out struct {
		Sources []apiSource `json:"sources"`
	}
	cf, raw, err := listCommand(ctx, "sources", args, stderr, &out)
	if err != nil {
		return err
	}
	if cf.json {
		printJSON(stdout, raw)
		return nil
	}
	t := newTable(stdout, "ID", "URL", "BRANCH", "COMMIT", "SYNCED", "ERROR")
	for _, s := range out.Sources {
		t.row(s.ID, s.URL, s.Branch, shortSHA(s.Commit), fmtTime(s.SyncedAt), s.Error)
	}
	return t.flush()
}

// sourcesSync is `sources sync ID`: sync the branch head now. A source
// whose content is at fault answers 422; the error shows the step and
// reason.
func sourcesSync(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cf := newClientFlags("sources sync", stderr)
	pos, err := parseArgs(fs, args, 1, 1, "ID")
	if err != nil {
		return err
	}
	c, err := cf.newClient()
	if err != nil {
		return err
	}
	var out struct {
		Commit    string   `json:"commit"`
		Apps      []apiApp `json:"apps"`
		Unchanged bool     `json:"unchanged"`
	}
	_, raw, err := c.callJSON(ctx, request{method: http.MethodPost, path: c.ws("sources", pos[0], "sync")}, &out)
	if err != nil {
		return fmt.Errorf("sync source %s: %w", pos[0], err)
	}
	if cf.json {
		printJSON(stdout, raw)
		return nil
	}
	names := make([]string, 0, len(out.Apps))
	for _, a := range out.Apps {
		names = append(names, fmt.Sprintf("%s (%d actions)", a.App, len(a.Actions)))
	}
	note := ""
	if out.Unchanged {
		note = ", unchanged"
	}
	fmt.Fprintf(stdout, "source %s synced at %s%s: %s\n", pos[0], shortSHA(out.Commit), note, strings.Join(names, ", "))
	return nil
}
