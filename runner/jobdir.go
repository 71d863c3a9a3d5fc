package runner

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"

	"github.com/windforce/windforce/spine"
)

// jobDir is one attempt's private directory: input, ctx, result, error,
// HOME and TMPDIR, and the runtime wrapper. It is removed after the job.
type jobDir struct {
	root, home, tmp                string
	input, ctx, result, errFile    string
	wrapper, entrypoint, commitDir string
	env                            []string
}

// jobCtx is the ctx argument of main(input, ctx) (DESIGN §3).
type jobCtx struct {
	Action     string `json:"action"`
	JobID      string `json:"job_id"`
	Workspace  string `json:"workspace"`
	App        string `json:"app"`
	Commit     string `json:"commit"`
	Entrypoint string `json:"entrypoint"`
	Attempt    int    `json:"attempt"`
	// Generation counts the requests a coalesced job held when it was
	// claimed (1 otherwise): a job compares it with the job view's
	// superseded_by before writing its side effects (docs/QUEUE.md).
	Generation int64  `json:"generation"`
	Token      string `json:"token"`
	URL        string `json:"url"`
}

// newJobCtx is the ctx of one job.
func newJobCtx(job *spine.ClaimedJob, token, url string) jobCtx {
	return jobCtx{Action: job.Pin.ActionKey, JobID: job.ID.String(), Workspace: job.Workspace,
		App: job.Pin.AppKey, Commit: job.Pin.CommitSHA, Entrypoint: job.Pin.Entrypoint,
		Attempt: job.Attempt, Generation: max(job.Generation, 1), Token: token, URL: url}
}

// newJobDir creates the job's directory and files; extra is the job's
// resolved env (JobEnv.Vars), after the runner's own variables.
func newJobDir(jobsDir string, job *spine.ClaimedJob, rt runtimeSpec, commitDir, token, url string, extra []string) (*jobDir, error) {
	entry, err := entrypointPath(commitDir, job.Pin.Entrypoint)
	if err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp(jobsDir, fmt.Sprintf("%s-%d-", job.ID, job.Attempt))
	if err != nil {
		return nil, fmt.Errorf("create job directory: %w", err)
	}
	jd := &jobDir{
		root: root, home: filepath.Join(root, "home"), tmp: filepath.Join(root, "tmp"),
		input: filepath.Join(root, "input.json"), ctx: filepath.Join(root, "ctx.json"),
		result: filepath.Join(root, "result.json"), errFile: filepath.Join(root, "error.json"),
		entrypoint: entry, commitDir: commitDir,
	}
	c := newJobCtx(job, token, url)
	if err := jd.write(job.Input, c, rt); err != nil {
		jd.remove()
		return nil, err
	}
	jd.env = withEnv(jobEnv(jd, c), extra)
	return jd, nil
}

// entrypointPath refuses an entrypoint that could leave the commit folder.
func entrypointPath(commitDir, entry string) (string, error) {
	if !fs.ValidPath(entry) || entry == "." || path.Clean(entry) != entry {
		return "", fmt.Errorf("entrypoint %q is not a clean path inside the commit", entry)
	}
	p := filepath.Join(commitDir, filepath.FromSlash(entry))
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("entrypoint %s: %w", entry, err)
	}
	return p, nil
}

func (jd *jobDir) write(input json.RawMessage, c jobCtx, rt runtimeSpec) error {
	for _, d := range []string{jd.home, jd.tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return fmt.Errorf("create job directory: %w", err)
		}
	}
	if len(input) == 0 {
		input = json.RawMessage("null")
	}
	ctxJSON, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encode ctx: %w", err)
	}
	files := map[string][]byte{jd.input: input, jd.ctx: ctxJSON}
	if rt.wrapper != "" {
		src, err := wrappers.ReadFile("wrappers/" + rt.wrapper)
		if err != nil {
			return fmt.Errorf("runtime wrapper: %w", err)
		}
		jd.wrapper = filepath.Join(jd.root, rt.wrapper)
		files[jd.wrapper] = src
	}
	for p, data := range files {
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return fmt.Errorf("write %s: %w", filepath.Base(p), err)
		}
	}
	return nil
}

// jobEnv is the whole environment of a job: the entry contract and a few
// neutral variables of the worker (PATH, locale, time zone). Nothing else
// of the worker leaks: no database URL, no secret, no WINDFORCE_* beyond
// WINDFORCE_URL.
func jobEnv(jd *jobDir, c jobCtx) []string {
	env := append([]string{"HOME=" + jd.home, "TMPDIR=" + jd.tmp}, contractEnv(c)...)
	env = append(env, "WF_INPUT="+jd.input, "WF_RESULT="+jd.result, "WF_ERROR="+jd.errFile,
		"WF_CTX="+jd.ctx, "WF_ENTRYPOINT="+jd.entrypoint,
		"PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1")
	return append(env, neutralEnv()...)
}

// contractEnv is the part of a job's environment that is the job's own
// (DESIGN §3): who it is and its WF_TOKEN. A warm job gets it over the
// process's environment for the time of the job.
func contractEnv(c jobCtx) []string {
	return []string{
		"WF_JOB_ID=" + c.JobID, "WF_WORKSPACE=" + c.Workspace, "WF_APP=" + c.App,
		"WF_ACTION=" + c.Action, "WF_COMMIT=" + c.Commit, "WF_ATTEMPT=" + strconv.Itoa(c.Attempt),
		"WF_GENERATION=" + strconv.FormatInt(c.Generation, 10),
		"WF_TOKEN=" + c.Token, "WINDFORCE_URL=" + c.URL,
	}
}

// remove deletes the job directory (the job's HOME and TMPDIR included).
func (jd *jobDir) remove() {
	_ = os.RemoveAll(jd.root)
}
