package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Defaults of the client commands; they reach the API `windforce dev` serves.
const (
	DefaultURL       = "http://127.0.0.1:8080"
	DefaultWorkspace = "default"
)

// Stdin is where `run --input -` and `seed -` read; tests replace it.
var Stdin io.Reader = os.Stdin

// clientFlags are the flags every client command shares: the client
// settings (--url, --token, --workspace, --dir) and --json.
type clientFlags struct {
	config
	json bool
}

// newClientFlags is a flag set for a client command with the client
// settings and --json registered.
func newClientFlags(name string, stderr io.Writer) (*flagSet, *clientFlags) {
	fs := newFlagSet(name, stderr)
	cf := &clientFlags{}
	fs.bind(cmdClient, &cf.config)
	fs.BoolVar(&cf.json, "json", false, "print the server's JSON instead of a table")
	return fs, cf
}

// parseArgs applies the environment, then parses flags that may come
// before, between or after the positional arguments (`run hello/greet
// --wait`), which flag.Parse alone does not allow, and checks the number
// of positional arguments.
func parseArgs(fs *flagSet, args []string, minPos, maxPos int, what string) ([]string, error) {
	if err := fs.applyEnv(); err != nil {
		return nil, err
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &UsageError{Msg: err.Error()}
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) < minPos || (maxPos >= 0 && len(pos) > maxPos) {
		return nil, &UsageError{Msg: fmt.Sprintf("usage: windforce %s %s", fs.Name(), what)}
	}
	return pos, nil
}

// client talks to the windforce HTTP API of DESIGN §4.
type client struct {
	base      string
	token     string
	workspace string
	hc        *http.Client
}

// newClient checks the shared flags and builds a client from them.
func (cf *clientFlags) newClient() (*client, error) {
	u, err := url.Parse(cf.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &UsageError{Msg: fmt.Sprintf("--url %q: want http://HOST:PORT or https://HOST (WINDFORCE_URL)", cf.url)}
	}
	if strings.TrimSpace(cf.workspace) == "" {
		return nil, &UsageError{Msg: "--workspace is empty (WINDFORCE_WORKSPACE)"}
	}
	token := cf.token
	if token == "" {
		token = devToken(u, cf.dir)
	}
	// No overall client timeout: log streams and --wait last as long as
	// the job; each command bounds its own waits with its context.
	return &client{base: strings.TrimRight(cf.url, "/"), token: token, workspace: cf.workspace,
		hc: &http.Client{Transport: http.DefaultTransport}}, nil
}

// devToken is the admin token `windforce dev` keeps in dir (--dir,
// WINDFORCE_DIR), used when no token is given and the server is on this
// machine: so `windforce run …` next to `windforce dev` needs no setup. A
// remote server never gets it.
func devToken(u *url.URL, dir string) string {
	host := u.Hostname()
	if host != "127.0.0.1" && host != "localhost" && host != "::1" {
		return ""
	}
	data, err := os.ReadFile(filepath.Join(dir, "admin-token"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// ws is the path of a workspace route: /api/w/{ws}/part/part…, each part
// escaped.
func (c *client) ws(parts ...string) string {
	var b strings.Builder
	b.WriteString("/api/w/")
	b.WriteString(url.PathEscape(c.workspace))
	for _, p := range parts {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(p))
	}
	return b.String()
}

// request is one API call.
type request struct {
	method string
	path   string
	query  url.Values
	body   []byte
	header map[string]string
}

// send sends req and returns the response unread; an answer of 400 or
// more becomes an *APIError and the body is closed.
func (c *client) send(ctx context.Context, req request) (*http.Response, error) {
	target := c.base + req.path
	if len(req.query) > 0 {
		target += "?" + req.query.Encode()
	}
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, target, body)
	if err != nil {
		return nil, fmt.Errorf("build request %s %s: %w", req.method, req.path, err)
	}
	if req.body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		hr.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range req.header {
		hr.Header.Set(k, v)
	}
	res, err := c.hc.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s %s: %w", req.method, req.path, ctx.Err())
		}
		return nil, fmt.Errorf("cannot reach windforce at %s (--url, WINDFORCE_URL): %w", c.base, err)
	}
	if res.StatusCode >= 400 {
		defer res.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		e := parseAPIError(req.method, req.path, res.StatusCode, data)
		if res.StatusCode == http.StatusUnauthorized && c.token == "" {
			e.Hint = "no token given: pass --token or set WINDFORCE_TOKEN (windforce dev prints one)"
		}
		return nil, e
	}
	return res, nil
}

// call sends req and reads the whole answer: its status and body.
func (c *client) call(ctx context.Context, req request) (int, []byte, error) {
	res, err := c.send(ctx, req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("read answer of %s %s: %w", req.method, req.path, err)
	}
	return res.StatusCode, data, nil
}

// callJSON sends req and decodes the JSON answer into out (when not nil);
// it returns the raw body for --json.
func (c *client) callJSON(ctx context.Context, req request, out any) (int, []byte, error) {
	status, data, err := c.call(ctx, req)
	if err != nil {
		return 0, nil, err
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return 0, nil, fmt.Errorf("decode answer of %s %s: %w", req.method, req.path, err)
		}
	}
	return status, data, nil
}

// jsonBody encodes v as a request body.
func jsonBody(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil { // only plain maps and structs are encoded here
		panic(fmt.Sprintf("encode request body: %v", err))
	}
	return data
}

// APIError is an error answer of the API: its status and the error body
// {"error":{"code","message","details"}}.
type APIError struct {
	Method, Path string
	Status       int
	Code         string
	Message      string
	Details      map[string]any
	// Hint is what the user can do about it, when the client knows.
	Hint string
}

// Error reads "422 invalid_input: input does not match … (POST /api/…)"
// followed by one indented line per detail; schema failures list each
// JSON pointer with its reason.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s: %s", e.Status, e.Code, e.Message)
	if e.Method != "" {
		fmt.Fprintf(&b, " (%s %s)", e.Method, e.Path)
	}
	for _, line := range detailLines(e.Details) {
		b.WriteString("\n  ")
		b.WriteString(line)
	}
	if e.Hint != "" {
		b.WriteString("\n  hint: " + e.Hint)
	}
	return b.String()
}

// detailLines renders an error body's details: "fields" (schema errors)
// as "at /pointer: message", anything else as "key: value", sorted.
func detailLines(d map[string]any) []string {
	var lines []string
	if fields, ok := d["fields"].([]any); ok {
		for _, f := range fields {
			fm, _ := f.(map[string]any)
			ptr, _ := fm["pointer"].(string)
			msg, _ := fm["message"].(string)
			if ptr == "" {
				ptr = "(the whole input)"
			}
			lines = append(lines, fmt.Sprintf("at %s: %s", ptr, msg))
		}
	}
	keys := make([]string, 0, len(d))
	for k := range d {
		if k != "fields" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := d[k]
		if s, ok := v.(string); ok {
			if s != "" {
				lines = append(lines, k+": "+s)
			}
			continue
		}
		data, _ := json.Marshal(v)
		lines = append(lines, k+": "+string(data))
	}
	return lines
}

// parseAPIError reads an error answer; a body that is not the error
// shape (a proxy's page) is shown, shortened, as the message.
func parseAPIError(method, path string, status int, data []byte) *APIError {
	e := &APIError{Method: method, Path: path, Status: status}
	var body struct {
		Error *struct {
			Code    string         `json:"code"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &body) == nil && body.Error != nil {
		e.Code, e.Message, e.Details = body.Error.Code, body.Error.Message, body.Error.Details
		return e
	}
	e.Code = strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "_"))
	msg := strings.TrimSpace(string(data))
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	e.Message = msg
	return e
}

// printJSON writes an answer body as it came, ending in a newline.
func printJSON(w io.Writer, data []byte) {
	data = bytes.TrimRight(data, "\n")
	_, _ = w.Write(data)
	_, _ = io.WriteString(w, "\n")
}

// printIndented writes a JSON value indented for people; invalid JSON is
// written as it is.
func printIndented(w io.Writer, data []byte) {
	var b bytes.Buffer
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("null")
	}
	if err := json.Indent(&b, data, "", "  "); err != nil {
		printJSON(w, data)
		return
	}
	printJSON(w, b.Bytes())
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// transient reports whether the same request may succeed later: a proxy
// or server hiccup (5xx) or rate limiting (429), not a refusal.
func (e *APIError) transient() bool {
	return e.Status >= 500 || e.Status == http.StatusTooManyRequests
}

// subcommand is one `windforce GROUP NAME …` command.
type subcommand func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// dispatch runs the sub-command args[0] of group (jobs, sources, …), or
// answers usage when it is missing or unknown.
func dispatch(ctx context.Context, group, usage string, cmds map[string]subcommand, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return &UsageError{Msg: usage}
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		return &UsageError{Msg: fmt.Sprintf("unknown %s command %q\n%s", group, args[0], usage)}
	}
	return cmd(ctx, args[1:], stdout, stderr)
}

// listCommand is the start of every `GROUP list` command (apps, sources,
// schedules): no positional arguments, then GET /api/w/{ws}/GROUP, decoded
// into out. It returns the flags (for --json) and the raw answer.
func listCommand(ctx context.Context, group string, args []string, stderr io.Writer, out any) (*clientFlags, []byte, error) {
	fs, cf := newClientFlags(group+" list", stderr)
	if _, err := parseArgs(fs, args, 0, 0, ""); err != nil {
		return nil, nil, err
	}
	c, err := cf.newClient()
	if err != nil {
		return nil, nil, err
	}
	_, raw, err := c.callJSON(ctx, request{method: http.MethodGet, path: c.ws(group)}, out)
	if err != nil {
		return nil, nil, fmt.Errorf("list %s: %w", group, err)
	}
	return cf, raw, nil
}
