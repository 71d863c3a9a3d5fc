package server

import (
	"errors"
	"net/http"
	"net/mail"
	"path"
	"sort"
	"strings"

	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/source/manifest"
)

// deployBody is the body of POST …/apps/{app}/deploy.
type deployBody struct {
	Message string            `json:"message"`
	Files   map[string]string `json:"files"`
	// Author is "Name" or "Name <email>".
	Author string `json:"author"`
}

// deployApp commits files to the git branch of the source that provides
// {app}, pushes, and syncs (DESIGN §3: the catalog changes only through
// sync). It answers like sync, {"commit","apps"}; a bad path is 400, an
// unknown app 404, a source URL the server refuses 422 (nothing pushed), a
// commit the sync refuses 422 with the catalog left as it was.
func (s *Server) deployApp(w http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	var body deployBody
	if err := decodeOptional(w, r, s.cfg.MaxInputBytes, &body); err != nil {
		return nil, err
	}
	req, err := deployRequest(body)
	if err != nil {
		return nil, err
	}
	ws := r.PathValue("ws")
	app, err := s.cfg.Store.GetApp(r.Context(), ws, r.PathValue("app"))
	if err != nil {
		return nil, err
	}
	res, err := s.cfg.Syncer.Deploy(r.Context(), ws, app.SourceID, req)
	if re := (*source.RefusedError)(nil); errors.As(err, &re) && !isSyncError(err) {
		// The source's URL is refused (a file:// path outside
		// WINDFORCE_FILE_SOURCES): nothing was cloned or pushed.
		return nil, &Error{Status: http.StatusUnprocessableEntity, Code: CodeInvalidInput, Message: "deploy: " + re.Error(), Err: err}
	}
	if errors.Is(err, manifest.ErrInvalid) && !isSyncError(err) {
		// Refused while writing the files (a path through a symlink).
		return nil, &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Message: err.Error(), Err: err}
	}
	if errors.Is(err, source.ErrPushRejected) && !isSyncError(err) {
		// The branch moved between clone and push, or the remote refused
		// the push: nothing was forced, the catalog is as it was.
		details := map[string]any{}
		if ge := (*source.GitError)(nil); errors.As(err, &ge) {
			details["git"] = ge.Stderr
		}
		return nil, &Error{Status: http.StatusConflict, Code: CodeConflict,
			Message: "deploy: the push was refused (the branch moved meanwhile, or the remote's rules); nothing changed",
			Details: details, Err: err}
	}
	if err != nil {
		return nil, err
	}
	return s.syncResult(r, app.SourceID, res)
}

func isSyncError(err error) bool {
	var se *source.SyncError
	return errors.As(err, &se)
}

// deployRequest checks the body and turns it into a source.DeployRequest:
// at least one file, every path relative and inside the repository.
func deployRequest(b deployBody) (source.DeployRequest, error) {
	if len(b.Files) == 0 {
		return source.DeployRequest{}, errorf(http.StatusBadRequest, CodeBadRequest, "files: a deploy needs at least one file")
	}
	req := source.DeployRequest{Files: make(map[string][]byte, len(b.Files)), Message: b.Message}
	paths := make([]string, 0, len(b.Files))
	for p := range b.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths) // the first bad path reported is the same every time
	for _, p := range paths {
		if err := checkDeployPath(p); err != nil {
			return req, err
		}
		req.Files[p] = []byte(b.Files[p])
	}
	if b.Author != "" {
		if a, err := mail.ParseAddress(b.Author); err == nil {
			req.AuthorName, req.AuthorEmail = a.Name, a.Address
		} else {
			req.AuthorName = b.Author
		}
		if strings.ContainsAny(req.AuthorName, "<>\n") {
			return req, errorf(http.StatusBadRequest, CodeBadRequest, "author %q: want \"Name\" or \"Name <email>\"", b.Author)
		}
	}
	return req, nil
}

// checkDeployPath refuses a path that is absolute, leaves the repository,
// touches .git, or is not clean slash-separated UTF-8 (400 naming it).
func checkDeployPath(p string) error {
	if !source.ValidDeployPath(p) {
		e := errorf(http.StatusBadRequest, CodeBadRequest, "files: path %q must be a relative path inside the repository", p)
		e.Details = map[string]any{"path": p}
		return e
	}
	if c := path.Clean(p); c != p {
		e := errorf(http.StatusBadRequest, CodeBadRequest, "files: path %q is not clean (want %q)", p, c)
		e.Details = map[string]any{"path": p}
		return e
	}
	return nil
}
