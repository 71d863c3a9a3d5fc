package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// runToken dispatches `windforce token create`.
func runToken(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return &UsageError{Msg: "usage: windforce token create --workspace W --scopes read,run [--label L]"}
	}
	fs, cf := newClientFlags("token create", stderr)
	scopes := fs.String("scopes", "", "comma-separated scopes: read, run, admin, operator")
	label := fs.String("label", "", "who or what uses the token; shown beside token:<id>, which jobs record as created_by")
	if _, err := parseArgs(fs, args[1:], 0, 0, "--workspace W --scopes read,run [--label L]"); err != nil {
		return err
	}
	list := splitList(*scopes)
	if len(list) == 0 {
		return &UsageError{Msg: "--scopes is required: read, run, admin, operator (comma-separated)"}
	}
	c, err := cf.newClient()
	if err != nil {
		return err
	}
	var out struct {
		Token  string   `json:"token"`
		ID     string   `json:"id"`
		Scopes []string `json:"scopes"`
	}
	body := map[string]any{"workspace": cf.workspace, "scopes": list, "label": *label}
	_, raw, err := c.callJSON(ctx, request{method: http.MethodPost, path: "/api/tokens", body: jsonBody(body)}, &out)
	if err != nil {
		return fmt.Errorf("create token: %w", err)
	}
	if cf.json {
		printJSON(stdout, raw)
		return nil
	}
	// Only the token on stdout, so `export WINDFORCE_TOKEN=$(windforce token create …)` works.
	fmt.Fprintln(stdout, out.Token)
	fmt.Fprintf(stderr, "token %s for workspace %s with scopes %s; it is shown only once\n",
		out.ID, cf.workspace, strings.Join(out.Scopes, ","))
	return nil
}

// splitList splits a comma-separated flag value, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
