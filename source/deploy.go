package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/windforce/windforce/source/manifest"
)

// DeployRequest is a set of file changes to commit to a source's branch.
type DeployRequest struct {
	// Files maps slash paths in the repository to their new content.
	Files map[string][]byte
	// Delete lists paths to remove.
	Delete []string
	// Message is the commit message; "" means a generated one.
	Message string
	// AuthorName and AuthorEmail sign the commit; "" means windforce.
	AuthorName  string
	AuthorEmail string
	// Base, when set, is the commit the change was made on (the one the
	// editor showed): a branch whose head is another commit refuses the
	// deploy with ErrBranchMoved and nothing is pushed, so a change
	// pushed meanwhile is never overwritten unseen. "" commits on
	// whatever the head is.
	Base string
	// CheckFirst validates the new commit as sync would (manifest.Load of
	// its tree) before pushing: a commit sync would refuse is
	// ErrWouldNotSync with the manifest's reasons, nothing is pushed and
	// the source's state is untouched. false pushes it and lets the sync
	// refuse it (the commit is then in git).
	CheckFirst bool
}

// ErrBranchMoved marks a deploy whose DeployRequest.Base is no longer the
// branch head: nothing was committed or pushed.
var ErrBranchMoved = errors.New("the branch moved since the change was made")

// ErrWouldNotSync marks a deploy with DeployRequest.CheckFirst whose new
// commit sync would refuse (errors.Is(err, manifest.ErrInvalid) holds the
// reasons): nothing was pushed.
var ErrWouldNotSync = errors.New("the new commit would not sync")

// Deploy commits the request's files to the source's branch (a shallow
// clone in a temporary directory), pushes, and then syncs. Git stays the
// single source of truth: the catalog changes only through that sync. A
// push refused because the branch moved meanwhile is an error; nothing is
// forced.
func (s *Syncer) Deploy(ctx context.Context, workspace, id string, d DeployRequest) (Result, error) {
	src, err := s.Catalog.GetSource(ctx, workspace, id)
	if err != nil {
		return Result{}, fmt.Errorf("deploy to %s/%s: %w", workspace, id, err)
	}
	// Checked again here: a row stored before the rules must not be
	// cloned or pushed to.
	remote, g, err := s.CheckRemote(src.URL, src.Branch)
	if err != nil {
		return Result{}, fmt.Errorf("deploy to %s/%s: %w", workspace, id, err)
	}
	if err := commitAndPush(ctx, g, remote, src.Branch, d); err != nil {
		return Result{}, fmt.Errorf("deploy to %s/%s: %w", workspace, id, err)
	}
	return s.Sync(ctx, workspace, id)
}

func commitAndPush(ctx context.Context, g *Git, remote, branch string, d DeployRequest) error {
	tmp, err := os.MkdirTemp("", "windforce-deploy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) //nolint:errcheck
	repo := filepath.Join(tmp, "repo")
	if _, err := g.run(ctx, tmp, "clone", "-q", "--depth=1", "--single-branch", "--branch", branch, "--", remote, repo); err != nil {
		return err
	}
	if d.Base != "" {
		out, err := g.run(ctx, repo, "rev-parse", "--verify", "HEAD^{commit}")
		if err != nil {
			return err
		}
		if head := strings.TrimSpace(string(out)); head != d.Base {
			return fmt.Errorf("%w: branch %s is at %.12s, the change was made on %.12s", ErrBranchMoved, branch, head, d.Base)
		}
	}
	if err := applyFiles(repo, d); err != nil {
		return err
	}
	if _, err := g.run(ctx, repo, "add", "-A"); err != nil {
		return err
	}
	name, email := d.AuthorName, d.AuthorEmail
	if name == "" {
		name = "windforce"
	}
	if email == "" {
		email = "windforce@localhost"
	}
	msg := d.Message
	if msg == "" {
		msg = "windforce deploy"
	}
	if _, err := g.run(ctx, repo, "-c", "user.name="+name, "-c", "user.email="+email,
		"commit", "-q", "--allow-empty", "-m", msg); err != nil {
		return err
	}
	if d.CheckFirst {
		files, err := g.tree(ctx, repo, "HEAD")
		if err != nil {
			return err
		}
		if _, err := manifest.Load(files); err != nil {
			return fmt.Errorf("%w (nothing pushed): %w", ErrWouldNotSync, err)
		}
	}
	if _, err := g.run(ctx, repo, "push", "-q", "origin", "HEAD:refs/heads/"+branch); err != nil {
		return fmt.Errorf("%w: %w", ErrPushRejected, err)
	}
	return nil
}

// ValidDeployPath reports whether p may be written by a deploy: a
// relative slash path inside the repository, in UTF-8 without NUL or
// backslash, that names no ".git" segment in any letter case (on a
// case-insensitive file system ".GIT/hooks" is the real hooks folder).
func ValidDeployPath(p string) bool {
	if p == "" || !utf8.ValidString(p) || strings.ContainsAny(p, "\\\x00") || strings.HasPrefix(p, "/") {
		return false
	}
	c := path.Clean(p)
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return false
	}
	for _, seg := range strings.Split(c, "/") {
		if strings.EqualFold(seg, ".git") {
			return false
		}
	}
	return true
}

// applyFiles writes and deletes files in the clone, refusing any path that
// leaves it or touches .git.
func applyFiles(repo string, d DeployRequest) error {
	check := func(p string) (string, error) {
		if !ValidDeployPath(p) {
			return "", fmt.Errorf("%w: deploy path %q must be a relative path inside the repository", manifest.ErrInvalid, p)
		}
		return filepath.Join(repo, filepath.FromSlash(path.Clean(p))), nil
	}
	for p, data := range d.Files {
		full, err := check(p)
		if err != nil {
			return err
		}
		if err := noLinkOnPath(repo, full); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			return err
		}
	}
	for _, p := range d.Delete {
		full, err := check(p)
		if err != nil {
			return err
		}
		if err := noLinkOnPath(repo, filepath.Dir(full)); err != nil {
			return err
		}
		if err := os.RemoveAll(full); err != nil {
			return err
		}
	}
	return nil
}

// noLinkOnPath refuses to write through a symbolic link: every existing
// component of full below repo (full included) must be a plain directory
// or file, so a link committed in the repository cannot make a deploy
// write outside the clone.
func noLinkOnPath(repo, full string) error {
	rel, err := filepath.Rel(repo, full)
	if err != nil {
		return err
	}
	cur := repo
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("%w: deploy path %s goes through a symbolic link", manifest.ErrInvalid, rel)
		}
	}
	return nil
}
