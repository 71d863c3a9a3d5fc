package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// funcs are the helpers templates use.
var funcs = template.FuncMap{
	"statusIcon": statusIcon,
	"time":       fmtTime,
	"timep":      fmtTimePtr,
	"dur":        fmtDuration,
	"json":       prettyJSON,
	"short":      shortSHA,
	"hasJSON":    hasJSON,
	"query":      query,
	"commitURL":  commitURL,
	"add":        func(a, b int) int { return a + b },
	"pins":       pins,
	"shortID":    shortID,
	"hasPrefix":  strings.HasPrefix,
}

// statusIcon is a status's symbol; it is always shown with the status's
// name, so colour is never the only signal.
func statusIcon(s spine.Status) string {
	switch s {
	case spine.StatusQueued:
		return "◷"
	case spine.StatusRunning:
		return "▶"
	case spine.StatusSuccess:
		return "✓"
	case spine.StatusFailure:
		return "✕"
	case spine.StatusCanceled:
		return "⊘"
	}
	return "•"
}

// fmtTime shows a time in UTC to the second; zero is "—".
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

func fmtTimePtr(t *time.Time) string {
	if t == nil {
		return "—"
	}
	return fmtTime(*t)
}

// fmtDuration rounds a duration for people: 1.234s, 2m3s, 4h0m.
func fmtDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "—"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}

// prettyJSON indents a JSON value; invalid JSON is shown as it is.
func prettyJSON(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

func hasJSON(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s != "" && s != "null"
}

// shortSHA is the first 10 characters of a commit.
func shortSHA(sha string) string {
	if len(sha) > 10 {
		return sha[:10]
	}
	return sha
}

// query builds a query string from key, value pairs, dropping empty values.
func query(kv ...string) template.URL {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			v.Set(kv[i], kv[i+1])
		}
	}
	if len(v) == 0 {
		return ""
	}
	return template.URL("?" + v.Encode())
}

// commitURL links a commit to its page on the source's forge: https
// URLs, and ssh ones (ssh://git@host/path, git@host:path) of the forges
// that serve the same path over https. "" when there is no such page
// (file://, an unknown ssh host).
func commitURL(repoURL, sha string) string {
	if sha == "" {
		return ""
	}
	host, path, ok := forgePath(repoURL)
	if !ok {
		return ""
	}
	base := host + "/" + strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	switch {
	case strings.HasPrefix(host, "gitlab."):
		return fmt.Sprintf("https://%s/-/commit/%s", base, sha)
	case strings.HasPrefix(host, "bitbucket."):
		return fmt.Sprintf("https://%s/commits/%s", base, sha)
	}
	return fmt.Sprintf("https://%s/commit/%s", base, sha)
}

// forgePath splits a remote URL into the host and repository path its
// web pages live under.
func forgePath(repoURL string) (host, path string, ok bool) {
	if user, rest, scp := strings.Cut(repoURL, "@"); scp && !strings.Contains(user, "/") && !strings.Contains(repoURL, "://") {
		host, path, ok = strings.Cut(rest, ":")
		return host, path, ok && knownForge(host)
	}
	u, err := url.Parse(repoURL)
	if err != nil || u.Host == "" || strings.Trim(u.Path, "/") == "" {
		return "", "", false
	}
	switch u.Scheme {
	case "https":
		return u.Host, u.Path, true
	case "ssh":
		return u.Hostname(), u.Path, knownForge(u.Hostname())
	}
	return "", "", false
}

// knownForge reports whether an ssh host serves its repositories' pages
// over https at the same path.
func knownForge(host string) bool {
	return host == "github.com" || strings.HasPrefix(host, "gitlab.") || strings.HasPrefix(host, "bitbucket.") ||
		host == "codeberg.org"
}

// shortID is the last 8 hex digits of a job id: the random end of a
// UUIDv7, so jobs created in the same millisecond still look different.
func shortID(id uuid.UUID) string {
	s := id.String()
	return s[len(s)-8:]
}
