package source

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// remoteKind is the transport a source URL names; it decides which
// protocol git may speak for it (GIT_ALLOW_PROTOCOL).
type remoteKind string

// The accepted transports.
const (
	kindHTTPS remoteKind = "https"
	kindSSH   remoteKind = "ssh"
	kindFile  remoteKind = "file"
)

// remote is a parsed source URL in one of the accepted forms.
type remote struct {
	kind remoteKind
	// path is the local path of a file:// URL (decoded, as git decodes it).
	path string
}

// credentialsHint says where credentials go instead of a source URL.
const credentialsHint = "credentials in a source URL would be stored and shown to every reader of the source; " +
	"configure them where git finds them on the server instead: a credential helper or ~/.git-credentials for https, " +
	"an ssh key and known_hosts for ssh (docs/SOURCES.md)"

// wantForms names the URL forms a source may have.
const wantForms = "want https://host/path, ssh://[user@]host/path, user@host:path or file:///absolute/path"

// branchPattern is what a branch name may look like here: a conservative
// subset of git's rules that can never read as an option.
var branchPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._/-]*$`)

// sshUser is a plain ssh login name ("git"): no password, nothing that
// could read as an option of ssh.
var sshUser = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)

// tokenPrefixes start the access tokens of common git hosts (GitHub,
// GitLab): as an ssh user such a token authenticates nothing, but it would
// be stored and shown to every read token.
var tokenPrefixes = []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "gldt-", "glptt-"}

// tokenLike reports an ssh user that is an access token rather than a
// login name: a known token prefix, or longer than any login name (32).
func tokenLike(user string) bool {
	if len(user) > 32 {
		return true
	}
	for _, p := range tokenPrefixes {
		if strings.HasPrefix(user, p) {
			return true
		}
	}
	return false
}

// scpLike is git's short ssh form "[user@]host:path". Git reads a URL as
// this form when a colon comes before any slash, so the host may hold
// neither; the user is a plain login name.
var scpLike = regexp.MustCompile(`^(?:([A-Za-z0-9_][A-Za-z0-9._-]*)@)?([A-Za-z0-9][A-Za-z0-9.-]*):(.*)$`)

// notHosts are words that read as a host in the short ssh form but are
// meant as a scheme or a transport ("file:/x" is ssh to a host "file" for
// git): refused so that nothing is silently read differently.
var notHosts = map[string]bool{"file": true, "http": true, "https": true, "ssh": true, "git": true, "ext": true, "fd": true}

// ValidateRemote checks a source's URL and branch before anything runs
// git with them. The URL is https://, ssh://, the short ssh form
// user@host:path, or file:///absolute/path; every other form git accepts
// (a plain local path, ext::, fd::, git://…) is refused, and so is any
// credential in it (an https user part, a password, a query or a
// fragment: credentials belong in the server's git configuration). The
// branch is a plain name. Whether a file:// path may be used at all is
// the Syncer's decision (FileSources). Errors are *RefusedError.
func ValidateRemote(raw, branch string) error {
	if _, err := parseRemote(raw); err != nil {
		return err
	}
	if !branchPattern.MatchString(branch) || strings.Contains(branch, "..") ||
		strings.HasSuffix(branch, "/") || strings.HasSuffix(branch, ".lock") {
		return &RefusedError{URL: Redact(raw), Reason: fmt.Sprintf("branch %q is not a valid branch name", branch)}
	}
	return nil
}

// parseRemote classifies raw into one of the accepted forms.
func parseRemote(raw string) (remote, error) {
	refuse := func(sentinel error, format string, args ...any) (remote, error) {
		return remote{}, &RefusedError{URL: Redact(raw), Reason: fmt.Sprintf(format, args...), Err: sentinel}
	}
	switch {
	case raw == "":
		return refuse(nil, "a source needs a URL")
	case strings.HasPrefix(raw, "-"):
		return refuse(nil, "a URL may not start with - (git would read it as an option)")
	case strings.IndexFunc(raw, isControl) >= 0:
		return refuse(nil, "control characters are not allowed")
	case strings.Contains(raw, "://"):
		return parseURL(raw, refuse)
	}
	if at := strings.Index(raw, "@"); at >= 0 && strings.Contains(raw[:at], ":") {
		// user:password@host:path (git would even read "user" as the host).
		return refuse(ErrCredentialsInURL, "%s", credentialsHint)
	}
	if m := scpLike.FindStringSubmatch(raw); m != nil && !notHosts[strings.ToLower(m[2])] {
		if tokenLike(m[1]) {
			return refuse(ErrCredentialsInURL, "the ssh user looks like an access token: %s", credentialsHint)
		}
		return parseSCP(m[3], refuse)
	}
	return refuse(nil, "%s", wantForms)
}

type refuseFunc func(sentinel error, format string, args ...any) (remote, error)

// parseURL checks the scheme://… forms.
func parseURL(raw string, refuse refuseFunc) (remote, error) {
	u, err := url.Parse(raw)
	if err != nil {
		if hasPassword(raw) {
			return refuse(ErrCredentialsInURL, "%s", credentialsHint)
		}
		return refuse(nil, "not a URL git and windforce read alike; %s", wantForms)
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#") {
		return refuse(ErrCredentialsInURL, "a query or fragment is not accepted: %s", credentialsHint)
	}
	if !strings.HasPrefix(raw, u.Scheme+"://") {
		// url.Parse lowers the scheme; git compares it as written.
		return refuse(nil, "write the scheme in lower case; %s", wantForms)
	}
	_, hasPw := u.User.Password()
	switch u.Scheme {
	case "https":
		if u.User != nil {
			return refuse(ErrCredentialsInURL, "%s", credentialsHint)
		}
		if !validHost(u) {
			return refuse(nil, "no valid host")
		}
		return remote{kind: kindHTTPS}, nil
	case "ssh":
		if hasPw {
			return refuse(ErrCredentialsInURL, "%s", credentialsHint)
		}
		if u.User != nil && !sshUser.MatchString(u.User.Username()) {
			return refuse(nil, "the ssh user must be a plain login name (like git)")
		}
		if u.User != nil && tokenLike(u.User.Username()) {
			return refuse(ErrCredentialsInURL, "the ssh user looks like an access token: %s", credentialsHint)
		}
		if !validHost(u) {
			return refuse(nil, "no valid host")
		}
		return remote{kind: kindSSH}, nil
	case "file":
		if u.User != nil || u.Host != "" {
			return refuse(nil, "a file:// URL names a path on the server: file:///absolute/path")
		}
		if u.Path == "" || !strings.HasPrefix(u.Path, "/") || u.Opaque != "" {
			return refuse(nil, "file:// needs an absolute path: file:///absolute/path")
		}
		return remote{kind: kindFile, path: u.Path}, nil
	}
	return refuse(nil, "%s", wantForms)
}

// parseSCP checks the path of the short ssh form user@host:path.
func parseSCP(p string, refuse refuseFunc) (remote, error) {
	switch {
	case p == "":
		return refuse(nil, "user@host:path needs a path")
	case strings.HasPrefix(p, "-"):
		return refuse(nil, "the path may not start with - (it would read as an option)")
	case strings.HasPrefix(p, ":"):
		// host::address is git's remote helper syntax (ext::, fd::…).
		return refuse(nil, "transport::address forms are not accepted; %s", wantForms)
	case strings.ContainsAny(p, "?#"):
		return refuse(ErrCredentialsInURL, "a query or fragment is not accepted: %s", credentialsHint)
	}
	return remote{kind: kindSSH}, nil
}

// validHost refuses an empty host and one that ssh would read as an
// option.
func validHost(u *url.URL) bool {
	h := u.Hostname()
	return h != "" && !strings.HasPrefix(h, "-") && !strings.HasPrefix(u.Host, "-")
}

// hasPassword reports a user:password@ part in a scheme://… string that
// url.Parse refused.
func hasPassword(raw string) bool {
	_, rest, _ := strings.Cut(raw, "://")
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return false
	}
	if slash := strings.Index(rest, "/"); slash >= 0 && slash < at {
		return false
	}
	return strings.Contains(rest[:at], ":")
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }
