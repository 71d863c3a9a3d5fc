package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/runner/sandbox"
	"github.com/windforce/windforce/runner/wftoken"
	"github.com/windforce/windforce/secrets"
	"github.com/windforce/windforce/spine"
)

// Defaults of DESIGN §1 for the limits a Runner enforces.
const (
	DefaultKillGrace      = 5 * time.Second
	DefaultMaxResultBytes = 1 << 20
	DefaultMaxLogBytes    = 2 << 20
	DefaultMaxCacheBytes  = 5 << 30
	DefaultMaxCacheAge    = 7 * 24 * time.Hour
)

// Config configures a Runner. Zero values take the defaults above.
type Config struct {
	// Store receives the jobs' logs while they run (AppendLog, fenced on
	// the lease); the last chunk goes with the outcome (ClaimedJob.LogTail).
	Store spine.Store
	// Cache is the object cache commits are fetched from (marker checked).
	Cache objectcache.Cache
	// Dir is WINDFORCE_DIR: commits/ holds the per-commit copies, jobs/ the
	// per-job directories. One worker process per Dir.
	Dir string
	// KillGrace is the SIGTERM → SIGKILL wait (WINDFORCE_KILL_GRACE).
	KillGrace time.Duration
	// MaxResultBytes and MaxLogBytes are WINDFORCE_MAX_RESULT_BYTES and
	// WINDFORCE_MAX_LOG_BYTES.
	MaxResultBytes int64
	MaxLogBytes    int64
	// Secret signs WF_TOKEN (WINDFORCE_SECRET); URL is WINDFORCE_URL as the
	// job sees it.
	Secret []byte
	URL    string
	// Secrets is where the secrets a job's env names are read at claim
	// and recorded (ResolveEnv); nil fails every job that names one.
	Secrets SecretStore
	// SecretsKey opens them (secrets.KeyFromConfig: WINDFORCE_SECRETS_KEY,
	// else derived from WINDFORCE_SECRET); zero derives it from Secret.
	SecretsKey secrets.Key
	// Runtimes overrides the executables by name ("bun", "node", "python3",
	// "npm"); by default they are looked up in PATH.
	Runtimes map[string]string
	// MaxCacheBytes and MaxCacheAge bound the per-commit copies: the least
	// recently used commits not in use are evicted past either.
	MaxCacheBytes int64
	MaxCacheAge   time.Duration
	// LogFlushInterval is how often buffered output is appended to
	// job_logs; default 200ms.
	LogFlushInterval time.Duration
	// Sandbox configures the job sandbox (DESIGN §6); Dir is always
	// among its hidden directories.
	Sandbox sandbox.Config
	// WarmProcesses caps the warm runtime processes kept (DESIGN §7):
	// the worker's concurrency, so the pool follows its slots; default
	// the number of CPUs.
	WarmProcesses int
	// Catalog is where the warm pool reads the commit each app is at now,
	// every CatalogInterval (default DefaultCatalogInterval) while it
	// holds processes, to drain those of commits no longer in the catalog
	// (warmdrain.go). Nil: only a job of a newer commit drains them.
	Catalog         CatalogReader
	CatalogInterval time.Duration
	Logger          *slog.Logger
}

// Runner runs claimed jobs: it prepares the pinned commit, runs the
// entrypoint in its own process tree and returns the result. Its Handle
// method is a spine.Handler.
type Runner struct {
	cfg     Config
	log     *slog.Logger
	commits *commitCache
	sandbox *sandbox.Sandbox
	// removals are job directories being removed; Close waits for them.
	removals sync.WaitGroup
	// installLocks serialize the installs of one workspace (install.go).
	installLocks sync.Map
	// warm is the pool of warm runtime processes (warm.go).
	warm *warmPool
}

// New checks cfg, fills its defaults and creates the directories.
func New(cfg Config) (*Runner, error) {
	if cfg.Store == nil || cfg.Cache == nil || cfg.Dir == "" {
		return nil, errors.New("runner: needs a store, an object cache and a directory")
	}
	if len(cfg.Secret) == 0 {
		return nil, errors.New("runner: needs a secret to sign WF_TOKEN (WINDFORCE_SECRET)")
	}
	abs, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	cfg.Dir = abs
	if cfg.SecretsKey.IsZero() {
		if cfg.SecretsKey, err = secrets.DeriveKey(cfg.Secret); err != nil {
			return nil, fmt.Errorf("runner: %w", err)
		}
	}
	fillDefaults(&cfg)
	// Job directories left by a worker that died are stale: one worker
	// process owns a Dir, so none of them belongs to a running job.
	for _, d := range []string{cfg.jobsDir(), cfg.warmDir()} {
		if err := os.RemoveAll(d); err != nil {
			return nil, fmt.Errorf("runner: clean %s: %w", d, err)
		}
	}
	// Searchable but not listable: a job's sandbox can start directly as
	// its uid when every parent of its paths is (runner/sandbox/direct.go);
	// nothing below can be listed by other users, and job directories
	// belong to their job.
	for _, d := range []string{cfg.commitsDir(), cfg.jobsDir(), cfg.warmDir(), cfg.installHome()} {
		if err := os.MkdirAll(d, 0o711); err != nil {
			return nil, fmt.Errorf("runner: create %s: %w", d, err)
		}
		if err := os.Chmod(d, 0o711); err != nil {
			return nil, fmt.Errorf("runner: %w", err)
		}
	}
	r := &Runner{cfg: cfg, log: cfg.Logger}
	sc := cfg.Sandbox
	sc.Hide = append([]string{cfg.Dir}, sc.Hide...)
	if sc.Logger == nil {
		sc.Logger = cfg.Logger
	}
	if r.sandbox, err = sandbox.New(sc); err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	r.commits = newCommitCache(r)
	r.warm = newWarmPool(r, cfg.WarmProcesses)
	return r, nil
}

func fillDefaults(cfg *Config) {
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = DefaultKillGrace
	}
	if cfg.MaxResultBytes <= 0 {
		cfg.MaxResultBytes = DefaultMaxResultBytes
	}
	if cfg.MaxLogBytes <= 0 {
		cfg.MaxLogBytes = DefaultMaxLogBytes
	}
	if cfg.MaxCacheBytes <= 0 {
		cfg.MaxCacheBytes = DefaultMaxCacheBytes
	}
	if cfg.MaxCacheAge <= 0 {
		cfg.MaxCacheAge = DefaultMaxCacheAge
	}
	if cfg.LogFlushInterval <= 0 {
		cfg.LogFlushInterval = 200 * time.Millisecond
	}
	if cfg.CatalogInterval <= 0 {
		cfg.CatalogInterval = DefaultCatalogInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
}

func (c *Config) commitsDir() string  { return filepath.Join(c.Dir, "commits") }
func (c *Config) jobsDir() string     { return filepath.Join(c.Dir, "jobs") }
func (c *Config) warmDir() string     { return filepath.Join(c.Dir, "warm") }
func (c *Config) installHome() string { return filepath.Join(c.commitsDir(), ".install-home") }

// Handle runs one job; it is the spine.Handler of a windforce worker. Its
// logs are appended while it runs; the output not appended yet when it
// returns is left in job.LogTail, which the worker writes in the same
// transaction as the job's outcome. The job's env is resolved first
// (ResolveEnv: its secrets as they are now); its WF_TOKEN and every
// secret value it received are masked in what it returns (result and
// error), as in the logs: the job may print, return or throw them.
func (r *Runner) Handle(ctx context.Context, job *spine.ClaimedJob) (json.RawMessage, error) {
	token, err := r.mintToken(job)
	if err != nil {
		return nil, err
	}
	env, envErr := r.ResolveEnv(ctx, job, token)
	res, err := r.handle(ctx, job, token, env, envErr)
	return env.mask.result(res), env.mask.err(err)
}

// handle prepares the commit and the job directory and runs the job;
// envErr (from ResolveEnv) fails it first, with the reason in its logs.
func (r *Runner) handle(ctx context.Context, job *spine.ClaimedJob, token string, env JobEnv, envErr error) (json.RawMessage, error) {
	logs := newLogSink(r.cfg, spine.Lease{JobID: job.ID, ClaimToken: job.ClaimToken}, env.mask)
	defer func() { job.LogTail = logs.Close() }()
	if envErr != nil {
		return nil, logs.Fail(envErr)
	}
	rt, err := lookupRuntime(job.Pin.Runtime)
	if err != nil {
		return nil, logs.Fail(err)
	}
	if job.Pin.Warm != nil && rt.warm != "" {
		return r.warm.run(ctx, job, rt, token, env.Vars, logs)
	}
	dir, release, err := r.commits.acquire(ctx, job, rt)
	if err != nil {
		return nil, logs.Fail(err)
	}
	defer release()
	jd, err := newJobDir(r.cfg.jobsDir(), job, rt, dir, token, r.cfg.URL, env.Vars)
	if err != nil {
		return nil, logs.Fail(err)
	}
	// The directory goes after the job is answered: removing it is not on
	// the path of the job's completion.
	r.removals.Add(1)
	defer func() { go func() { defer r.removals.Done(); jd.remove() }() }()
	return r.run(ctx, job, rt, jd, logs)
}

// mintToken signs the job's WF_TOKEN: bound to this claim, expiring at
// claim + timeout + kill grace.
func (r *Runner) mintToken(job *spine.ClaimedJob) (string, error) {
	life := job.Pin.Timeout
	if life <= 0 {
		life = 24 * time.Hour
	}
	started := job.StartedAt
	if started.IsZero() {
		started = time.Now()
	}
	tok, err := wftoken.Mint(r.cfg.Secret, wftoken.Claims{
		JobID: job.ID, Workspace: job.Workspace, ClaimToken: job.ClaimToken,
		Expiry: started.Add(life + r.cfg.KillGrace),
	})
	if err != nil {
		return "", fmt.Errorf("runner: %w", err)
	}
	return tok, nil
}

// Sandbox is the runner's job sandbox, for the worker's start line and
// /readyz.
func (r *Runner) Sandbox() *sandbox.Sandbox { return r.sandbox }

// Close releases what the runner holds outside its directory (its
// cgroups). Call it after the worker has stopped.
func (r *Runner) Close() {
	r.warm.close()
	r.removals.Wait()
	r.sandbox.Close()
}
