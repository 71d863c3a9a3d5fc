package source

import (
	"regexp"
	"strings"
)

// redacted stands for hidden credentials.
const redacted = "***"

// Redact returns a source URL fit to show and log: an https user part and
// any user:password are replaced by "***", and so are a query and a
// fragment (where tokens hide: ?access_token=…). A plain ssh user
// (ssh://git@host/…, git@host:…) is kept: it is a login name, not a
// secret — unless it looks like an access token (tokenLike). Rows stored before URLs with credentials were refused are shown
// through it too.
func Redact(raw string) string {
	scheme, rest, isURL := strings.Cut(raw, "://")
	if !isURL {
		scheme, rest = "", raw
	}
	rest = redactUserinfo(strings.ToLower(scheme), rest, isURL)
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i+1] + redacted
	}
	if !isURL {
		return rest
	}
	return scheme + "://" + rest
}

// redactUserinfo hides the user part of rest (what follows "scheme://",
// or a whole short-form "user@host:path") unless it is a plain ssh login.
func redactUserinfo(scheme, rest string, isURL bool) string {
	end := len(rest)
	if isURL {
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			end = i
		}
	}
	var at int
	if isURL {
		at = strings.LastIndex(rest[:end], "@") // the authority's user part
	} else {
		at = strings.Index(rest, "@") // user@host:path
	}
	if at < 0 {
		return rest
	}
	user := rest[:at]
	plainSSH := !strings.Contains(user, ":") && sshUser.MatchString(user) && !tokenLike(user) && (scheme == "ssh" || !isURL)
	if plainSSH {
		return rest
	}
	return redacted + rest[at:]
}

// urlInText finds what reads as a URL in free text (git's stderr quotes
// the remote: "fatal: unable to access 'https://tok@host/r.git/': …").
var urlInText = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s'"<>` + "`" + `]+`)

// RedactText applies Redact to every URL in s: git's messages, sync
// errors stored on a source, log lines.
func RedactText(s string) string {
	return urlInText.ReplaceAllStringFunc(s, Redact)
}
