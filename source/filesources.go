package source

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// FileSourcesVar is the setting of `windforce server` that lists the
// folders file:// sources may be below.
const FileSourcesVar = "WINDFORCE_FILE_SOURCES"

// SplitFileSources splits a WINDFORCE_FILE_SOURCES value: folders
// separated by colons or commas; blanks are dropped. A relative folder
// allows nothing (see CheckFileSources).
func SplitFileSources(v string) []string {
	var dirs []string
	for _, d := range strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ',' }) {
		if d = strings.TrimSpace(d); d != "" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// CheckFileSources reports the first folder of dirs that can never allow
// a source (a relative path), so a server can refuse to start with it.
// A folder that does not exist yet is fine: it allows nothing until then.
func CheckFileSources(dirs []string) error {
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			return fmt.Errorf("%s: %q is not an absolute path", FileSourcesVar, d)
		}
	}
	return nil
}

// localRemote decides whether the file:// source at path may be used and
// returns the URL to hand git instead of the stored one: the repository
// git would open, with symbolic links and ".." resolved. With
// AnyFileSource (windforce dev) every path is used as given. Otherwise the
// repository must be below one of FileSources on path-component
// boundaries (/srv/git-evil is not below /srv/git), after resolving links,
// so a workspace cannot name another's repository on the server's disk
// and read or push to it.
func (s *Syncer) localRemote(raw, path string) (string, error) {
	if s.AnyFileSource {
		return raw, nil
	}
	refuse := func(format string, args ...any) (string, error) {
		return "", &RefusedError{URL: Redact(raw), Err: ErrFileSourceNotAllowed,
			Reason: fmt.Sprintf(format, args...)}
	}
	if len(s.FileSources) == 0 {
		return refuse("file:// sources are off on this server; its operator may allow folders for them with %s", FileSourcesVar)
	}
	// The path as written is checked before the disk is looked at, so a
	// refusal tells nothing about what exists outside the folders.
	outside := fmt.Sprintf("the path is not below the folders of %s (symbolic links and .. resolved)", FileSourcesVar)
	clean := filepath.Clean(path)
	if !s.belowFileSources(clean, false) {
		return refuse("%s", outside)
	}
	dir, err := filepath.EvalSymlinks(clean)
	if err != nil {
		return refuse("no repository at that path")
	}
	if !s.belowFileSources(dir, true) {
		return refuse("%s", outside)
	}
	gitDir, err := repoDir(dir)
	if err != nil {
		return refuse("%v", err)
	}
	if !s.belowFileSources(gitDir, true) {
		return refuse("%s", outside)
	}
	// git decodes %XX in a file:// URL; the path is given exactly.
	return "file://" + strings.ReplaceAll(gitDir, "%", "%25"), nil
}

// repoDir is the directory git opens for the resolved path dir (the
// order of git's enter_repo: dir/.git, then dir), resolved again. The
// names git would try after it (D/.git, D.git) must not exist, so git
// cannot open another repository than the one checked; a .git file
// (gitdir: elsewhere) is refused for the same reason.
func repoDir(dir string) (string, error) {
	d := dir
	dotGit := filepath.Join(dir, ".git")
	if fi, err := os.Lstat(dotGit); err == nil {
		if d, err = filepath.EvalSymlinks(dotGit); err != nil {
			return "", fmt.Errorf("%s cannot be resolved", dotGit)
		}
		if fi, err = os.Stat(d); err != nil || !fi.IsDir() {
			return "", fmt.Errorf("%s is not a directory (a .git file pointing elsewhere is not accepted)", dotGit)
		}
	}
	if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s is not a repository", dir)
	}
	for _, other := range []string{filepath.Join(d, ".git"), d + ".git"} {
		if _, err := os.Lstat(other); !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s exists beside the repository %s, and git might open it instead", other, d)
		}
	}
	return d, nil
}

// belowFileSources reports whether p is one of FileSources or inside
// one. A resolved p is compared with each folder resolved the same way; a
// p as written with each folder as written or resolved.
func (s *Syncer) belowFileSources(p string, resolved bool) bool {
	for _, d := range s.FileSources {
		if !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		if !resolved && within(d, p) {
			return true
		}
		root, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue // not there (yet): allows nothing
		}
		if within(root, p) {
			return true
		}
	}
	return false
}

// within reports whether p is root or below it, on path components.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
