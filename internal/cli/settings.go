package cli

import (
	"fmt"
	"time"

	"github.com/windforce/windforce/events/relay"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/runner"
	"github.com/windforce/windforce/runner/sandbox"
	"github.com/windforce/windforce/server"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store"
)

// config is what the settings fill: one struct for every command, each
// registering only the settings it has, so `dev` runs the server's and
// the worker's parts on the very values `server` and `worker` parse.
type config struct {
	// Where state lives.
	dbURL, objectCache, dir string

	// The API and its services: server and dev.
	listen, secret, secretsKey, adminToken, fileSources, metricsToken string
	syncInterval, retention, zombieTimeout, reaperInterval, maxWait   time.Duration
	restartLimit                                                      int
	maxInput                                                          size
	limits                                                            apiLimits
	relay                                                             relayFlags

	// The worker: worker and dev.
	tags, url, name, metricsListen             string
	concurrency                                int
	heartbeat, killGrace, drainGrace, cacheAge time.Duration
	maxResult, maxLog, cacheBytes              size
	sandbox                                    sandboxFlags

	// Client commands.
	token, workspace string
}

// Groups of commands that share settings.
const (
	cmdAPI    = cmdServer | cmdDev // serve the API and run its services
	cmdRunner = cmdWorker | cmdDev // run jobs
)

// defaultDir is the local state of dev and a worker, and where client
// commands find dev's admin token.
const defaultDir = "./.windforce"

// settings is every setting of every command, each default in this one
// place (or a package constant it names). dev has every setting of
// server and worker but these, deliberately:
//   - --file-sources: dev accepts any local repository (DESIGN §10);
//   - --url: dev's jobs reach dev's own listener, which may be on a
//     random port; a WINDFORCE_URL exported for the client commands (the
//     banner suggests it) must not send them elsewhere;
//   - --name: dev runs one worker, nobody tells it apart;
//   - --metrics-listen: dev serves /metrics on its API listener already.
var settings = []setting{
	{flag: "database-url", variable: "WINDFORCE_DATABASE_URL", cmds: cmdAPI | cmdWorker | cmdMigrate | cmdBench | cmdSecretsRotate,
		def: store.DefaultURL, help: "postgres://… or sqlite://PATH",
		field: func(c *config) any { return &c.dbURL }, per: []variant{
			{cmds: cmdDev, def: "", help: "postgres://… or sqlite://PATH; default sqlite://DIR/windforce.db"},
			{cmds: cmdBench, def: "", help: "postgres://… (a fresh schema is made and dropped) or sqlite://PATH (a fresh file, deleted afterwards)"}}},
	{flag: "object-cache", variable: "WINDFORCE_OBJECT_CACHE", cmds: cmdAPI | cmdWorker,
		def: objectcache.DefaultSpec, help: "file://DIR or postgres",
		field: func(c *config) any { return &c.objectCache }, per: []variant{
			{cmds: cmdDev, def: "", help: "file://DIR or postgres; default file://DIR/objects of --dir"}}},
	{flag: "dir", variable: "WINDFORCE_DIR", cmds: cmdRunner | cmdClient,
		def: defaultDir, help: "local state: per-commit copies and job dirs",
		field: func(c *config) any { return &c.dir }, per: []variant{
			{cmds: cmdDev, help: "state: database, object cache, example repository, job dirs"},
			{cmds: cmdClient, help: "where windforce dev keeps its admin token, used when no token is given"}}},
	{flag: "listen", variable: "WINDFORCE_LISTEN", cmds: cmdAPI,
		def: "127.0.0.1:8080", help: "HTTP address",
		field: func(c *config) any { return &c.listen }, per: []variant{
			{cmds: cmdDev, help: "HTTP address of the API and console"}}},
	{flag: "secret", variable: "WINDFORCE_SECRET", cmds: cmdAPI | cmdWorker | cmdSecretsRotate,
		def: "", help: "key that verifies WF_TOKEN; prefer the variable",
		field: func(c *config) any { return &c.secret }, per: []variant{
			{cmds: cmdWorker, help: "key that signs WF_TOKEN; prefer the variable"},
			{cmds: cmdDev, help: "key that signs WF_TOKEN and sessions; else generated and kept in DIR"},
			{cmds: cmdSecretsRotate, help: "the current WINDFORCE_SECRET, when the new secrets key is derived from it"}}},
	{flag: "secrets-key", variable: "WINDFORCE_SECRETS_KEY", cmds: cmdAPI | cmdWorker | cmdSecretsRotate,
		def: "", help: "AES-256 key of workspace secrets, 32 bytes as base64 or hex; else derived from WINDFORCE_SECRET; prefer the variable",
		field: func(c *config) any { return &c.secretsKey }, per: []variant{
			{cmds: cmdSecretsRotate, help: "the new secrets key, 32 bytes as base64 or hex; else derived from WINDFORCE_SECRET"}}},
	{flag: "admin-token", variable: "WINDFORCE_ADMIN_TOKEN", cmds: cmdAPI,
		def: "", help: "bootstrap admin token, every workspace; prefer the variable",
		field: func(c *config) any { return &c.adminToken }, per: []variant{
			{cmds: cmdDev, help: "admin token to accept; else one is generated and kept in DIR"}}},
	{flag: "file-sources", variable: "WINDFORCE_FILE_SOURCES", cmds: cmdServer,
		def: "", help: "folders whose git repositories file:// sources may name, : or , separated; empty = none",
		field: func(c *config) any { return &c.fileSources }},
	{flag: "max-input-bytes", variable: "WINDFORCE_MAX_INPUT_BYTES", cmds: cmdAPI,
		def: size(server.DefaultMaxInputBytes), help: "largest request body, a `size` like 1MiB",
		field: func(c *config) any { return &c.maxInput }},
	{flag: "max-wait", variable: "WINDFORCE_MAX_WAIT", cmds: cmdAPI,
		def: server.DefaultMaxWait, help: "longest ?wait= on run",
		field: func(c *config) any { return &c.maxWait }},
	{flag: "sync-interval", variable: "WINDFORCE_SYNC_INTERVAL", cmds: cmdAPI,
		def: 60 * time.Second, help: "periodic poll of git sources, 0 = off",
		field: func(c *config) any { return &c.syncInterval }},
	{flag: "retention", variable: "WINDFORCE_RETENTION", cmds: cmdAPI,
		def: 168 * time.Hour, help: "how long finished jobs are kept",
		field: func(c *config) any { return &c.retention }},
	{flag: "zombie-timeout", variable: "WINDFORCE_ZOMBIE_TIMEOUT", cmds: cmdAPI,
		def: 60 * time.Second, help: "a running job without a heartbeat this long is reaped",
		field: func(c *config) any { return &c.zombieTimeout }},
	{flag: "reaper-interval", variable: "WINDFORCE_REAPER_INTERVAL", cmds: cmdAPI,
		def: 15 * time.Second, help: "reaper pass interval",
		field: func(c *config) any { return &c.reaperInterval }},
	{flag: "restart-limit", variable: "WINDFORCE_RESTART_LIMIT", cmds: cmdAPI,
		def: 3, help: "restarts of a job whose worker died before it fails",
		field: func(c *config) any { return &c.restartLimit }},
	{flag: "relay-timeout", variable: "WINDFORCE_RELAY_TIMEOUT", cmds: cmdAPI,
		def: relay.DefaultTimeout, help: "event relay: longest webhook request or NATS publish",
		field: func(c *config) any { return &c.relay.timeout }},
	{flag: "relay-poll", variable: "WINDFORCE_RELAY_POLL", cmds: cmdAPI,
		def: relay.DefaultPoll, help: "event relay: backstop pass interval",
		field: func(c *config) any { return &c.relay.poll }},
	{flag: "relay-concurrency", variable: "WINDFORCE_RELAY_CONCURRENCY", cmds: cmdAPI,
		def: relay.DefaultConcurrency, help: "event relay: sends in flight per sink and process",
		field: func(c *config) any { return &c.relay.concurrency }},
	{flag: "max-connections", variable: "WINDFORCE_MAX_CONNECTIONS", cmds: cmdAPI,
		def: 0, help: "open HTTP connections at most; idle ones make room for new ones; 0 = half the file limit",
		field: func(c *config) any { return &c.limits.maxConns }},
	{flag: "max-waiters-per-token", variable: "WINDFORCE_MAX_WAITERS_PER_TOKEN", cmds: cmdAPI,
		def: server.DefaultMaxWaiters, help: "open ?wait requests per token",
		field: func(c *config) any { return &c.limits.maxWaiters }},
	{flag: "max-followers-per-token", variable: "WINDFORCE_MAX_FOLLOWERS_PER_TOKEN", cmds: cmdAPI,
		def: server.DefaultMaxFollowers, help: "open logs ?follow=1 streams per token",
		field: func(c *config) any { return &c.limits.maxFollowers }},
	{flag: "max-child-depth", variable: "WINDFORCE_MAX_CHILD_DEPTH", cmds: cmdAPI,
		def: server.DefaultMaxChildDepth, help: "how deep child jobs may nest",
		field: func(c *config) any { return &c.limits.maxChildDepth }},
	{flag: "metrics-token", variable: "WINDFORCE_METRICS_TOKEN", cmds: cmdAPI | cmdWorker,
		def: "", help: "bearer token GET /metrics requires; empty = open; prefer the variable",
		field: func(c *config) any { return &c.metricsToken }},
	{flag: "metrics-listen", variable: "WINDFORCE_METRICS_LISTEN", cmds: cmdWorker,
		def: "", help: "serve Prometheus /metrics on this address; empty = off",
		field: func(c *config) any { return &c.metricsListen }},

	{flag: "tags", variable: "WINDFORCE_TAGS", cmds: cmdRunner,
		def: spine.DefaultTag, help: "comma-separated routing tags",
		field: func(c *config) any { return &c.tags }},
	{flag: "concurrency", variable: "WINDFORCE_CONCURRENCY", cmds: cmdRunner,
		def: defaultConcurrency(), help: "jobs run at once; default 4 per CPU",
		field: func(c *config) any { return &c.concurrency }},
	{flag: "name", variable: "WINDFORCE_WORKER_NAME", cmds: cmdWorker,
		def: "", help: "worker name in job rows; default host-pid-random",
		field: func(c *config) any { return &c.name }},
	{flag: "heartbeat", variable: "WINDFORCE_HEARTBEAT", cmds: cmdRunner,
		def: 5 * time.Second, help: "heartbeat interval",
		field: func(c *config) any { return &c.heartbeat }},
	{flag: "kill-grace", variable: "WINDFORCE_KILL_GRACE", cmds: cmdRunner,
		def: runner.DefaultKillGrace, help: "SIGTERM → SIGKILL wait",
		field: func(c *config) any { return &c.killGrace }},
	{flag: "drain-grace", variable: "WINDFORCE_DRAIN_GRACE", cmds: cmdRunner,
		def: 30 * time.Second, help: "on SIGTERM, how long running jobs may finish before they are released",
		field: func(c *config) any { return &c.drainGrace }, per: []variant{
			{cmds: cmdDev, def: 5 * time.Second, help: "on Ctrl-C, how long running jobs may finish before they are released"}}},
	{flag: "max-result-bytes", variable: "WINDFORCE_MAX_RESULT_BYTES", cmds: cmdRunner,
		def: size(runner.DefaultMaxResultBytes), help: "largest result, a `size` like 1MiB",
		field: func(c *config) any { return &c.maxResult }},
	{flag: "max-log-bytes", variable: "WINDFORCE_MAX_LOG_BYTES", cmds: cmdRunner,
		def: size(runner.DefaultMaxLogBytes), help: "log cap per job, a `size` like 2MiB",
		field: func(c *config) any { return &c.maxLog }},
	{flag: "commit-cache-bytes", variable: "WINDFORCE_COMMIT_CACHE_BYTES", cmds: cmdRunner,
		def: size(runner.DefaultMaxCacheBytes), help: "`size` of the per-commit copies kept; least recently used evicted beyond",
		field: func(c *config) any { return &c.cacheBytes }},
	{flag: "commit-cache-age", variable: "WINDFORCE_COMMIT_CACHE_AGE", cmds: cmdRunner,
		def: runner.DefaultMaxCacheAge, help: "copies unused this long are evicted",
		field: func(c *config) any { return &c.cacheAge }},
	{flag: "sandbox", variable: "WINDFORCE_SANDBOX", cmds: cmdRunner,
		def: "on", help: "on: every job in the job sandbox (refuses to start where it cannot be enforced); off: jobs run as the worker's user and can read its files",
		field: func(c *config) any { return &c.sandbox.mode }},
	{flag: "sandbox-uids", variable: "WINDFORCE_SANDBOX_UIDS", cmds: cmdRunner,
		def:   fmt.Sprintf("%d-%d", sandbox.DefaultFirstUID, sandbox.DefaultFirstUID+sandbox.DefaultUIDCount-1),
		help:  "root worker: the uids jobs run as, FIRST-LAST, one per running job",
		field: func(c *config) any { return &c.sandbox.uids }},
	{flag: "job-memory", variable: "WINDFORCE_JOB_MEMORY", cmds: cmdRunner,
		def: size(sandbox.DefaultMemory), help: "a job's memory limit: the default and the cap of its manifest's limits, a `size` like 512MiB",
		field: func(c *config) any { return &c.sandbox.memory }},
	{flag: "job-pids", variable: "WINDFORCE_JOB_PIDS", cmds: cmdRunner,
		def: sandbox.DefaultPids, help: "a job's process and thread limit, default and cap",
		field: func(c *config) any { return &c.sandbox.pids }},
	{flag: "job-cpu", variable: "WINDFORCE_JOB_CPU", cmds: cmdRunner,
		def: 0.0, help: "a job's CPU limit in cores, default and cap; 0 = none",
		field: func(c *config) any { return &c.sandbox.cpu }},

	{flag: "url", variable: "WINDFORCE_URL", cmds: cmdWorker | cmdClient,
		def: DefaultURL, help: "API URL given to jobs",
		field: func(c *config) any { return &c.url }, per: []variant{
			{cmds: cmdClient, help: "API base URL"}}},
	{flag: "token", variable: "WINDFORCE_TOKEN", cmds: cmdClient,
		def: "", help: "API token",
		field: func(c *config) any { return &c.token }},
	{flag: "workspace", variable: "WINDFORCE_WORKSPACE", cmds: cmdClient,
		def: DefaultWorkspace, help: "workspace",
		field: func(c *config) any { return &c.workspace }},
}
