package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/windforce/windforce/secrets"
	"github.com/windforce/windforce/server"
)

// apiSecret is the secret shape the API answers (never a value).
type apiSecret = server.SecretView

const secretsUsage = `usage: windforce secrets set|list|rm|audit|rotate-key …
  secrets set NAME [--description D] [--from-file F]   the value from stdin, or the file; never an argument
  secrets list
  secrets rm NAME
  secrets audit [--limit N] [--cursor C]
  secrets rotate-key --old-key K|--old-key-file F|--old-secret-file F [--database-url URL]`

// runSecrets dispatches `windforce secrets SUBCOMMAND`.
func runSecrets(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return dispatch(ctx, "secrets", secretsUsage, map[string]subcommand{
		"set": secretsSet, "list": secretsList, "ls": secretsList, "rm": secretsRemove, "delete": secretsRemove,
		"audit": secretsAudit, "rotate-key": secretsRotateKey,
	}, args, stdout, stderr)
}

// errValueOnCommandLine refuses a value given as an argument: the command
// line shows in ps, /proc and shell history.
var errValueOnCommandLine = &UsageError{Msg: "secrets set takes no value on the command line " +
	"(it would show in ps and in shell history): pipe it on stdin or use --from-file F"}

// secretsSet is `secrets set NAME`: the value is read from --from-file or
// stdin (one trailing newline dropped, as echo and here-strings add one),
// never from an argument.
func secretsSet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	for _, a := range args {
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && name == "value" {
			return errValueOnCommandLine
		}
	}
	fs, cf := newClientFlags("secrets set", stderr)
	description := fs.String("description", "", "what the secret is for (shown in lists)")
	fromFile := fs.String("from-file", "", "read the value from this file, as it is (default: stdin)")
	pos, err := parseArgs(fs, args, 1, -1, "NAME [--description D] [--from-file F] < value")
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return errValueOnCommandLine
	}
	name := pos[0]
	if err := secrets.ValidName(name); err != nil {
		return &UsageError{Msg: err.Error()}
	}
	value, err := readSecretValue(*fromFile)
	if err != nil {
		return err
	}
	c, err := cf.newClient()
	if err != nil {
		return err
	}
	var sec apiSecret
	status, raw, err := c.callJSON(ctx, request{method: http.MethodPut, path: c.ws("secrets", name),
		body: jsonBody(map[string]any{"value": string(value), "description": *description})}, &sec)
	clear(value)
	if err != nil {
		return fmt.Errorf("set secret %s: %w", name, err)
	}
	if cf.json {
		printJSON(stdout, raw)
		return nil
	}
	verb := "replaced"
	if status == http.StatusCreated {
		verb = "created"
	}
	fmt.Fprintf(stdout, "secret %s %s: version %d\n", sec.Name, verb, sec.Version)
	return nil
}

// readSecretValue reads the value from file, or stdin when file is "",
// at most one byte over the limit (the server answers the limit's error).
func readSecretValue(file string) ([]byte, error) {
	src, what := Stdin, "stdin"
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("read secret value: %w", err)
		}
		defer f.Close()
		src, what = f, file
	}
	value, err := io.ReadAll(io.LimitReader(src, secrets.MaxValueBytes+3))
	if err != nil {
		return nil, fmt.Errorf("read secret value from %s: %w", what, err)
	}
	if file == "" {
		value = bytes.TrimSuffix(value, []byte("\n"))
		value = bytes.TrimSuffix(value, []byte("\r"))
	}
	if len(value) == 0 {
		return nil, &UsageError{Msg: fmt.Sprintf("the secret value from %s is empty", what)}
	}
	return value, nil
}

// secretsList is `secrets list`.
func secretsList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var out []apiSecret
	cf, raw, err := listCommand(ctx, "secrets", args, stderr, &out)
	if err != nil {
		return err
	}
	if cf.json {
		printJSON(stdout, raw)
		return nil
	}
	t := newTable(stdout, "NAME", "VERSION", "UPDATED", "BY", "DESCRIPTION")
	for _, s := range out {
		desc, _, _ := strings.Cut(s.Description, "\n")
		t.row(s.Name, strconv.FormatInt(s.Version, 10), fmtTime(&s.UpdatedAt), s.UpdatedBy, desc)
	}
	return t.flush()
}

// secretsRemove is `secrets rm NAME`.
func secretsRemove(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cf := newClientFlags("secrets rm", stderr)
	pos, err := parseArgs(fs, args, 1, 1, "NAME")
	if err != nil {
		return err
	}
	c, err := cf.newClient()
	if err != nil {
		return err
	}
	if _, _, err := c.call(ctx, request{method: http.MethodDelete, path: c.ws("secrets", pos[0])}); err != nil {
		return fmt.Errorf("remove secret %s: %w", pos[0], err)
	}
	if cf.json {
		printJSON(stdout, jsonBody(map[string]any{"name": pos[0], "deleted": true}))
		return nil
	}
	fmt.Fprintf(stdout, "secret %s removed\n", pos[0])
	return nil
}

// secretsAudit is `secrets audit`: who changed which secret when, newest
// first, one page.
func secretsAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cf := newClientFlags("secrets audit", stderr)
	limit := fs.Int("limit", 50, "entries to show (at most 500)")
	cursor := fs.String("cursor", "", "the next page: a previous answer's cursor")
	if _, err := parseArgs(fs, args, 0, 0, "[--limit N] [--cursor C]"); err != nil {
		return err
	}
	c, err := cf.newClient()
	if err != nil {
		return err
	}
	q := url.Values{"limit": {strconv.Itoa(*limit)}}
	if *cursor != "" {
		q.Set("cursor", *cursor)
	}
	var out struct {
		Entries    []server.SecretAuditView `json:"entries"`
		NextCursor *string                  `json:"next_cursor"`
	}
	_, raw, err := c.callJSON(ctx, request{method: http.MethodGet, path: c.ws("secrets", "audit"), query: q}, &out)
	if err != nil {
		return fmt.Errorf("read the secrets audit: %w", err)
	}
	if cf.json {
		printJSON(stdout, raw)
		return nil
	}
	t := newTable(stdout, "AT", "ACTION", "NAME", "VERSION", "BY")
	for _, e := range out.Entries {
		t.row(fmtTime(&e.At), e.Action, e.Name, strconv.FormatInt(e.Version, 10), e.Actor)
	}
	if err := t.flush(); err != nil {
		return err
	}
	if out.NextCursor != nil {
		fmt.Fprintf(stdout, "more: windforce secrets audit --cursor %s\n", *out.NextCursor)
	}
	return nil
}
