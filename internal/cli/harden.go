package cli

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"syscall"

	"github.com/windforce/windforce/server"
)

// minSecretBytes is the shortest WINDFORCE_SECRET and WINDFORCE_ADMIN_TOKEN
// a server or worker accepts: 32 bytes, as much as the HMAC-SHA256 key they
// feed. `a` or `x` is guessed at once and forges every WF_TOKEN and session.
const minSecretBytes = 32

// secret is a secret setting's variable and value, for checkSecrets.
type secret struct{ name, v string }

// checkSecrets refuses the first of secrets under minSecretBytes.
func checkSecrets(secrets ...secret) error {
	for _, s := range secrets {
		if err := checkSecret(s.name, s.v); err != nil {
			return err
		}
	}
	return nil
}

// checkSecret refuses a bootstrap secret under minSecretBytes; empty (not
// set) is left to the caller.
func checkSecret(name, v string) error {
	if v == "" || len(v) >= minSecretBytes {
		return nil
	}
	return &UsageError{Msg: fmt.Sprintf("%s is %d bytes; it must be at least %d bytes of random text (for example `openssl rand -hex 32`)",
		name, len(v), minSecretBytes)}
}

// apiLimits are the server's limits on what one client may hold (DESIGN
// §4; docs/OPERATIONS.md lists them). Their settings are in settings.go.
type apiLimits struct {
	maxConns, maxWaiters, maxFollowers, maxChildDepth int
}

// check refuses limits that make no sense.
func (l *apiLimits) check() error {
	if l.maxConns < 0 || l.maxWaiters < 1 || l.maxFollowers < 1 || l.maxChildDepth < 1 {
		return &UsageError{Msg: "--max-connections must be at least 0, --max-waiters-per-token, --max-followers-per-token and --max-child-depth at least 1"}
	}
	return nil
}

// apply sets the limits on an API's config.
func (l *apiLimits) apply(c *server.Config) {
	c.MaxWaiters, c.MaxFollowers, c.MaxChildDepth = l.maxWaiters, l.maxFollowers, l.maxChildDepth
}

// raiseFileLimit lifts the process's soft limit of open files to its hard
// limit (every connection, database connection, git process and job log
// holds one) and returns the limit in force; 0 when it cannot be read.
func raiseFileLimit(log *slog.Logger) uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		log.Warn("read the open-file limit", "err", err)
		return 0
	}
	if lim.Cur < lim.Max {
		want := lim
		want.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
			log.Warn("raise the open-file limit to its hard limit", "soft", lim.Cur, "hard", lim.Max, "err", err)
			return lim.Cur
		}
		lim = want
	}
	return lim.Cur
}

// connBound is the connection bound for a file limit when none is given:
// half the limit, leaving the rest to the database pool, git and jobs;
// at least 64, and unbounded when the limit is unknown.
func connBound(given int, fileLimit uint64) int {
	if given > 0 || fileLimit == 0 {
		return given
	}
	return int(max(fileLimit/2, 64))
}

// httpServer builds the API's HTTP server over h with the bound of
// maxConns open connections (0: from the file limit it raises first).
func httpServer(h http.Handler, maxConns int, log *slog.Logger) (*http.Server, func(net.Listener) net.Listener) {
	files := raiseFileLimit(log)
	bound := connBound(maxConns, files)
	log.Info("http connections bounded", "max_connections", bound, "open_file_limit", files)
	return server.NewHTTPServer(h, server.HTTPConfig{MaxConns: bound, Logger: log})
}
