package console

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/source/manifest"
)

// fileRow is one file of the app's commit in the file list.
type fileRow struct {
	Path string
	Size int
	// Link is a symbolic link's target ("" for a regular file).
	Link     string
	Binary   bool
	Selected bool
}

// editor is the deploy form: the file being edited or added, on Base.
type editor struct {
	Path    string
	Content string
	Message string
	// Base is the commit the form was made on; a branch that moved since
	// refuses the deploy (409).
	Base string
	// Exists is true when Path is a file of Base (editing, not adding).
	Exists bool
	// ReadOnly says why the selected file cannot be edited here ("" when
	// it can): binary, a symbolic link, over the size limit.
	ReadOnly string
}

// appData is the app page: its source, the files of its commit and the
// deploy form, with the outcome of a deploy just made.
type appData struct {
	App    catalog.App
	Source catalog.Source
	// Siblings are the other apps of the same source: a deploy changes
	// their commit too.
	Siblings []string
	Files    []fileRow
	// FilesError says why the files could not be read from the object
	// cache ("" when they were).
	FilesError string
	Edit       editor
	// MaxBytes is the largest file the form deploys.
	MaxBytes int64
	// Flash is the sync result of a deploy; Refusal why one was refused
	// (with Problems, the manifest's reasons, one a line).
	Flash    string
	Refusal  string
	Problems []string
}

// appPage shows an app with the files of its current commit, read from the
// object cache (the tree sync stored), and for an admin the form that
// edits one of them, or adds one, and deploys. ?file=PATH selects a file.
func (c *Console) appPage(q *req) error {
	d, files, err := c.appData(q)
	if err != nil {
		return err
	}
	if p := q.r.URL.Query().Get("file"); p != "" {
		f, ok := files[p]
		if !ok {
			return &pageError{status: http.StatusNotFound,
				msg: fmt.Sprintf("No file %q in commit %s of source %s.", p, shortSHA(d.App.CommitSHA), d.App.SourceID)}
		}
		d.Edit.Path, d.Edit.Exists = p, true
		d.Edit.Content, d.Edit.ReadOnly = c.editable(f)
		for i := range d.Files {
			d.Files[i].Selected = d.Files[i].Path == p
		}
	}
	c.render(q.w, http.StatusOK, "app", "", c.view(q, "App "+d.App.Key, d))
	return nil
}

// appData loads the app, its source and the files of its commit (by path).
func (c *Console) appData(q *req) (appData, map[string]objectcache.File, error) {
	ctx := q.r.Context()
	app, err := c.cfg.Store.GetApp(ctx, q.ws, q.r.PathValue("app"))
	if err != nil {
		return appData{}, nil, err
	}
	src, err := c.cfg.Store.GetSource(ctx, q.ws, app.SourceID)
	if err != nil {
		return appData{}, nil, fmt.Errorf("app %s: read its source: %w", app.Key, err)
	}
	src.URL, src.Error = source.Redact(src.URL), source.RedactText(src.Error)
	d := appData{App: app, Source: src, MaxBytes: c.cfg.MaxInputBytes, Edit: editor{Base: app.CommitSHA}}
	apps, err := c.cfg.Store.ListApps(ctx, q.ws)
	if err != nil {
		return appData{}, nil, err
	}
	for _, a := range apps {
		if a.SourceID == app.SourceID && a.Key != app.Key {
			d.Siblings = append(d.Siblings, a.Key)
		}
	}
	byPath := map[string]objectcache.File{}
	tree, err := c.cfg.Syncer.Cache.Get(ctx, objectcache.Key{Workspace: q.ws, Source: app.SourceID, Commit: app.CommitSHA})
	if err != nil {
		// The catalog names only complete trees; a cache emptied by hand
		// is repaired by the next sync.
		c.log.Warn("console: read app files", "workspace", q.ws, "app", app.Key, "err", err)
		d.FilesError = fmt.Sprintf("The files of commit %s are not in the object cache (%v). Sync the source to store them again.",
			shortSHA(app.CommitSHA), err)
		return d, byPath, nil
	}
	for _, f := range tree {
		byPath[f.Path] = f
		row := fileRow{Path: f.Path, Size: len(f.Data)}
		if f.IsSymlink() {
			row.Link = string(f.Data)
		} else {
			row.Binary = !isText(f.Data)
		}
		d.Files = append(d.Files, row)
	}
	return d, byPath, nil
}

// editable returns a file's text for the form, or why it cannot be
// edited here.
func (c *Console) editable(f objectcache.File) (string, string) {
	switch {
	case f.IsSymlink():
		return "", "It is a symbolic link to " + string(f.Data) + "; change it with git."
	case !isText(f.Data):
		return "", "It is not UTF-8 text; change it with git."
	case int64(len(f.Data)) > c.cfg.MaxInputBytes:
		return "", fmt.Sprintf("It is %d bytes, over the %d bytes the form deploys (WINDFORCE_MAX_INPUT_BYTES); change it with git.",
			len(f.Data), c.cfg.MaxInputBytes)
	}
	return string(f.Data), ""
}

func isText(b []byte) bool { return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 }

// deployFile commits one file (edited or new) with the admin's message to
// the app's source through the API's deploy path (Syncer.Deploy: clone,
// commit, push, sync), on the commit the form was made on and validated
// before the push. The page shows the sync result, or why nothing was
// pushed: bad input 400/413, the branch moved 409, a manifest sync would
// refuse 422 with its reasons.
func (c *Console) deployFile(q *req) error {
	d, files, err := c.appData(q)
	if err != nil {
		return err
	}
	f := q.r.PostForm
	d.Edit = editor{Path: strings.TrimSpace(f.Get("path")), Content: f.Get("content"),
		Message: strings.TrimSpace(f.Get("message")), Base: f.Get("base")}
	old, exists := files[d.Edit.Path]
	d.Edit.Exists = exists
	refuse := func(status int, msg string, problems ...string) error {
		d.Refusal, d.Problems = msg, problems
		c.render(q.w, status, "app", "", c.view(q, "App "+d.App.Key, d))
		return nil
	}
	data := []byte(d.Edit.Content)
	if !exists || !bytes.Contains(old.Data, []byte("\r\n")) {
		// Browsers send a textarea's line ends as CRLF; a file that had
		// none keeps none.
		data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	}
	switch p := d.Edit.Path; {
	case p == "":
		return refuse(http.StatusBadRequest, "Give the file's path in the repository, such as src/main.ts.")
	case !source.ValidDeployPath(p) || path.Clean(p) != p || path.Base(p) == objectcache.Marker:
		return refuse(http.StatusBadRequest, fmt.Sprintf("The path %q must be a clean relative path inside the repository (no leading /, no .., no .git).", p))
	case d.Edit.Message == "":
		return refuse(http.StatusBadRequest, "Write a commit message: it is what git's history says about this change.")
	case d.Edit.Base == "":
		return refuse(http.StatusBadRequest, "The form does not say which commit it was made on; reload the page and edit again.")
	case int64(len(data)) > c.cfg.MaxInputBytes:
		return refuse(http.StatusRequestEntityTooLarge, fmt.Sprintf("The file is %d bytes, over the limit of %d bytes (WINDFORCE_MAX_INPUT_BYTES).", len(data), c.cfg.MaxInputBytes))
	case exists && (old.IsSymlink() || !isText(old.Data)):
		_, why := c.editable(old)
		return refuse(http.StatusBadRequest, fmt.Sprintf("%s cannot be edited here. %s", d.Edit.Path, why))
	case exists && d.Edit.Base == d.App.CommitSHA && bytes.Equal(old.Data, data):
		return refuse(http.StatusBadRequest, fmt.Sprintf("%s is unchanged; there is nothing to deploy.", d.Edit.Path))
	}

	res, err := c.cfg.Syncer.Deploy(q.r.Context(), q.ws, d.App.SourceID, source.DeployRequest{
		Files: map[string][]byte{d.Edit.Path: data}, Message: d.Edit.Message,
		AuthorName: strings.Map(func(r rune) rune {
			if strings.ContainsRune("<>\r\n", r) {
				return -1
			}
			return r
		}, q.u.display()),
		Base: d.Edit.Base, CheckFirst: true,
	})
	var mf *manifest.Error
	var se *source.SyncError
	var re *source.RefusedError
	var ge *source.GitError
	switch {
	case errors.Is(err, source.ErrBranchMoved):
		return refuse(http.StatusConflict, "Nothing was pushed: branch "+d.Source.Branch+" moved since this form was opened ("+
			errText(err)+"). Open the app again to edit its new commit; your text is kept below to copy.")
	case errors.Is(err, source.ErrWouldNotSync) && errors.As(err, &mf):
		problems := make([]string, len(mf.Problems))
		for i, p := range mf.Problems {
			problems[i] = p.String()
		}
		return refuse(http.StatusUnprocessableEntity, "Nothing was pushed: sync would refuse this commit, so branch "+
			d.Source.Branch+" is unchanged. Fix these and deploy again:", problems...)
	case errors.As(err, &se):
		// Pushed, and the sync after it failed: the commit is in git, the
		// catalog keeps its commit, the source shows the error.
		return refuse(http.StatusUnprocessableEntity, "The commit was pushed but its sync failed; the catalog keeps commit "+
			shortSHA(d.App.CommitSHA)+": "+source.RedactText(se.Message()))
	case errors.Is(err, source.ErrPushRejected):
		msg := "Nothing changed: the remote refused the push (the branch moved meanwhile, or the remote's rules)."
		if errors.As(err, &ge) {
			msg += " git: " + source.RedactText(strings.TrimSpace(ge.Stderr))
		}
		return refuse(http.StatusConflict, msg)
	case errors.As(err, &re):
		return refuse(http.StatusUnprocessableEntity, "Nothing was pushed: "+re.Error())
	case errors.Is(err, manifest.ErrInvalid):
		return refuse(http.StatusBadRequest, "Nothing was pushed: "+errText(err))
	case err != nil:
		return fmt.Errorf("deploy %s from the console: %w", d.App.Key, err)
	}

	done := "Deployed " + d.Edit.Path + " as commit " + shortSHA(res.Commit) + " to branch " + d.Source.Branch +
		" and synced source " + d.App.SourceID + ": " + manifest.Summary(res.Apps) + "."
	nd, files, err := c.appData(q)
	if errors.Is(err, catalog.ErrNotFound) {
		// The deploy renamed or removed this app: its source's apps remain.
		return c.showSources(q, http.StatusOK, sourcesData{Flash: done})
	}
	if err != nil {
		return err
	}
	nd.Flash = done
	if nf, ok := files[d.Edit.Path]; ok {
		nd.Edit.Path, nd.Edit.Exists = d.Edit.Path, true
		nd.Edit.Content, nd.Edit.ReadOnly = c.editable(nf)
		for i := range nd.Files {
			nd.Files[i].Selected = nd.Files[i].Path == d.Edit.Path
		}
	}
	c.render(q.w, http.StatusOK, "app", "", c.view(q, "App "+nd.App.Key, nd))
	return nil
}

// errText is err's text after its last "deploy to ws/src: " prefix.
func errText(err error) string {
	s := err.Error()
	if _, rest, ok := strings.Cut(s, ": "); ok && strings.HasPrefix(s, "deploy to ") {
		return source.RedactText(rest)
	}
	return source.RedactText(s)
}
