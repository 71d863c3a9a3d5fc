package source

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/windforce/windforce/objectcache"
)

// Defaults of Git.
const (
	DefaultGitTimeout   = 2 * time.Minute
	DefaultMaxTreeBytes = 256 << 20
)

// Git runs the git binary for sync and deploy. The zero value is ready.
type Git struct {
	// Binary is the git executable; "" means "git" from PATH.
	Binary string
	// Env is added to the process environment of every git command (for
	// example GIT_SSH_COMMAND); credentials come from the server's git
	// configuration and environment.
	Env []string
	// Timeout bounds one git command; zero means DefaultGitTimeout.
	Timeout time.Duration
	// MaxTreeBytes bounds a commit's tree; zero means DefaultMaxTreeBytes.
	MaxTreeBytes int64

	// protocols is GIT_ALLOW_PROTOCOL for this remote's commands; "" means
	// file, https and ssh (see forKind).
	protocols string
}

// forKind returns a copy of g whose commands may speak only k's protocol:
// an https source cannot be turned into a read of the server's disk (a
// file:// submodule, an insteadOf rewrite), and a file source into a
// network fetch.
func (g *Git) forKind(k remoteKind) *Git {
	c := *g
	c.protocols = string(k)
	return &c
}

// GitError is a git command that failed, with what git said.
type GitError struct {
	Args   []string
	Stderr string
	Err    error
}

// Error names the command and git's message.
func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", e.Args[0], msg)
}

// Unwrap returns the process error.
func (e *GitError) Unwrap() error { return e.Err }

// newGitError builds a GitError with every URL in the arguments and in
// git's message redacted: git echoes the remote ("unable to access
// 'https://tok@host/…'"), and the error ends up on the source, in API
// answers and in logs.
func newGitError(args []string, stderr string, err error) *GitError {
	shown := make([]string, len(args))
	for i, a := range args {
		shown[i] = RedactText(a)
	}
	return &GitError{Args: shown, Stderr: RedactText(stderr), Err: err}
}

// run runs git in dir and returns its stdout.
func (g *Git) run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	var stdout bytes.Buffer
	err := g.stream(ctx, dir, func(r io.Reader) error {
		_, err := io.Copy(&stdout, r)
		return err
	}, args...)
	return stdout.Bytes(), err
}

// stream runs git in dir and hands its stdout to read while it runs, so a
// large output (an archive) is never held whole in memory. An error from
// read stops git.
func (g *Git) stream(ctx context.Context, dir string, read func(io.Reader) error, args ...string) error {
	timeout := g.Timeout
	if timeout <= 0 {
		timeout = DefaultGitTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	bin := g.Binary
	if bin == "" {
		bin = "git"
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	protocols := g.protocols
	if protocols == "" {
		protocols = "file:https:ssh"
	}
	cmd.Env = append(os.Environ(),
		"GIT_TERMINAL_PROMPT=0", // never wait for a password on a server
		"GIT_ALLOW_PROTOCOL="+protocols,
		"LC_ALL=C",
	)
	cmd.Env = append(cmd.Env, g.Env...)
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return newGitError(args, "", err)
	}
	if err := cmd.Start(); err != nil {
		return newGitError(args, "", err)
	}
	readErr := read(stdout)
	if readErr != nil {
		cancel() // stop git; its exit error is not the reason
		_, _ = io.Copy(io.Discard, stdout)
	}
	waitErr := cmd.Wait()
	if readErr != nil {
		return readErr
	}
	if waitErr != nil {
		if ctx.Err() != nil {
			waitErr = fmt.Errorf("%w (after %s)", ctx.Err(), timeout)
		}
		return newGitError(args, stderr.String(), waitErr)
	}
	return nil
}

// RemoteHead returns the commit at the head of branch on the remote.
func (g *Git) RemoteHead(ctx context.Context, remote, branch string) (string, error) {
	out, err := g.run(ctx, "", "ls-remote", "--heads", "--", remote, "refs/heads/"+branch)
	if err != nil {
		return "", err
	}
	sha, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
	if sha == "" {
		return "", fmt.Errorf("branch %q not found on %s", branch, Redact(remote))
	}
	return sha, nil
}

// Fetch fetches the head of branch (shallow, one commit) into a temporary
// repository and returns its commit and its tree.
func (g *Git) Fetch(ctx context.Context, remote, branch string) (string, []objectcache.File, error) {
	dir, err := os.MkdirTemp("", "windforce-fetch-")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(dir) //nolint:errcheck
	if _, err := g.run(ctx, dir, "init", "-q", "--bare", "."); err != nil {
		return "", nil, err
	}
	if _, err := g.run(ctx, dir, "fetch", "-q", "--depth=1", "--no-tags", "--", remote,
		"+refs/heads/"+branch+":refs/heads/windforce-sync"); err != nil {
		return "", nil, err
	}
	out, err := g.run(ctx, dir, "rev-parse", "--verify", "refs/heads/windforce-sync^{commit}")
	if err != nil {
		return "", nil, err
	}
	commit := strings.TrimSpace(string(out))
	files, err := g.tree(ctx, dir, commit)
	if err != nil {
		return "", nil, err
	}
	return commit, files, nil
}

// tree reads a commit's files with git archive.
func (g *Git) tree(ctx context.Context, dir, commit string) ([]objectcache.File, error) {
	limit := g.MaxTreeBytes
	if limit <= 0 {
		limit = DefaultMaxTreeBytes
	}
	var files []objectcache.File
	err := g.stream(ctx, dir, func(r io.Reader) error {
		var err error
		files, err = untar(r, limit)
		return err
	}, "archive", "--format=tar", commit)
	return files, err
}

// untar turns git archive's output into files: regular files keep only
// their executable bit (git records no other), links their target.
func untar(r io.Reader, limit int64) ([]objectcache.File, error) {
	tr := tar.NewReader(r)
	var files []objectcache.File
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read tree: %w", err)
		}
		switch h.Typeflag {
		case tar.TypeReg:
			total += h.Size
			if total > limit {
				return nil, fmt.Errorf("the commit's files exceed %d MiB", limit>>20)
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", h.Name, err)
			}
			mode := fs.FileMode(0o644)
			if h.Mode&0o111 != 0 {
				mode = 0o755
			}
			files = append(files, objectcache.File{Path: h.Name, Mode: mode, Data: data})
		case tar.TypeSymlink:
			files = append(files, objectcache.File{Path: h.Name, Mode: fs.ModeSymlink | 0o777, Data: []byte(h.Linkname)})
		}
	}
}
