package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/windforce/windforce/server"
)

// apiSource is the source shape of DESIGN §4.
type apiSource = server.SourceView

const sourcesUsage = `usage: windforce sources add|list|sync|hook-secret …
  sources add ID URL [--branch B] [--hook-secret S | --hook-secret-file F]
  sources list
  sources sync ID
  sources hook-secret ID (--hook-secret S | --hook-secret-file F | --clear)`

// runSources dispatches `windforce sources SUBCOMMAND`.
func runSources(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return dispatch(ctx, "sources", sourcesUsage, map[string]subcommand{
		"add": sourcesAdd, "list": sourcesList, "ls": sourcesList, "sync": sourcesSync,
		"hook-secret": sourcesHookSecret,
	}, args, stdout, stderr)
}

// hookSecretFlags are --hook-secret and --hook-secret-file: the secret
// git hosts sign the source's push hook with, given as text or read from
// a file (which keeps it out of the shell history and the process list).
type hookSecretFlags struct{ text, file *string }

func newHookSecretFlags(fs *flagSet) hookSecretFlags {
	return hookSecretFlags{
		text: fs.String("hook-secret", "", "secret git hosts sign the push hook with (GitHub/Gitea secret, GitLab token)"),
		file: fs.String("hook-secret-file", "", "read the hook secret from this file (one line)"),
	}
}

// secret is the secret the flags give, "" when neither is set.
func (h hookSecretFlags) secret() (string, error) {
	if *h.file == "" {
		return *h.text, nil
	}
	if *h.text != "" {
		return "", &UsageError{Msg: "give --hook-secret or --hook-secret-file, not both"}
	}
	data, err := os.ReadFile(*h.file)
	if err != nil {
		return "", fmt.Errorf("read hook secret: %w", err)
	}
	s := strings.TrimRight(string(data), "\r\n")
	if s == "" {
		return "", fmt.Errorf("read hook secret: %s is empty", *h.file)
	}
	return s, nil
}

// sourcesAdd is `sources add ID URL [--branch B] [--hook-secret S]`; it
// does not sync.
func sourcesAdd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cf := newClientFlags("sources add", stderr)
	branch := fs.String("branch", "main", "branch to sync")
	hf := newHookSecretFlags(fs)
	pos, err := parseArgs(fs, args, 2, 2, "ID URL [--branch B] [--hook-secret S | --hook-secret-file F]")
	if err != nil {
		return err
	}
	secret, err := hf.secret()
	if err != nil {
		return err
	}
	c, err := cf.newClient()
	if err != nil {
		return err
	}
	body := map[string]string{"id": pos[0], "url": pos[1], "branch": *branch}
	if secret != "" {
		body["hook_secret"] = secret
	}
	var src apiSource
	_, raw, err := c.callJSON(ctx, request{method: http.MethodPost, path: c.ws("sources"),
		body: jsonBody(body)}, &src)
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

// sourcesHookSecret is `sources hook-secret ID`: set, rotate or (--clear)
// clear the secret git hosts sign the source's push hook with.
func sourcesHookSecret(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cf := newClientFlags("sources hook-secret", stderr)
	hf := newHookSecretFlags(fs)
	clearSecret := fs.Bool("clear", false, "remove the hook secret: only bearer tokens may call the hook")
	const what = "ID (--hook-secret S | --hook-secret-file F | --clear)"
	pos, err := parseArgs(fs, args, 1, 1, what)
	if err != nil {
		return err
	}
	secret, err := hf.secret()
	if err != nil {
		return err
	}
	if (secret == "") == !*clearSecret {
		return &UsageError{Msg: "sources hook-secret " + what + ": give a secret or --clear"}
	}
	c, err := cf.newClient()
	if err != nil {
		return err
	}
	var src apiSource
	_, raw, err := c.callJSON(ctx, request{method: http.MethodPut, path: c.ws("sources", pos[0], "hook-secret"),
		body: jsonBody(map[string]string{"hook_secret": secret})}, &src)
	if err != nil {
		return fmt.Errorf("set hook secret of source %s: %w", pos[0], err)
	}
	if cf.json {
		printJSON(stdout, raw)
		return nil
	}
	if src.HookSecretSet {
		fmt.Fprintf(stdout, "source %s: hook secret set; give the same secret to the git host's webhook\n", src.ID)
	} else {
		fmt.Fprintf(stdout, "source %s: hook secret cleared; only bearer tokens may call its hook\n", src.ID)
	}
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
	t := newTable(stdout, "ID", "URL", "BRANCH", "COMMIT", "SYNCED", "HOOK SECRET", "ERROR")
	for _, s := range out.Sources {
		hook := "-"
		if s.HookSecretSet {
			hook = "set"
		}
		t.row(s.ID, s.URL, s.Branch, shortSHA(s.Commit), fmtTime(s.SyncedAt), hook, s.Error)
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
