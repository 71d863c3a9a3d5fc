// Package cli is the windforce command line: it parses arguments, reads
// WINDFORCE_* configuration and runs the subcommand. main only maps the
// returned error to an exit code.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"

	"github.com/windforce/windforce/store"
)

// Version is set at build time with -ldflags "-X …/internal/cli.Version=v1.2.3";
// otherwise the module build info is used.
var Version = ""

// UsageError is a mistake on the command line (exit code 2).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// ExitCode maps an error from Run to the process exit code: 2 for usage
// mistakes and for a job that ended canceled, 1 for everything else
// (a failed job included).
func ExitCode(err error) int {
	var u *UsageError
	var c *JobCanceledError
	if errors.As(err, &u) || errors.Is(err, flag.ErrHelp) || errors.As(err, &c) {
		return 2
	}
	return 1
}

const usage = `windforce runs code from git as durable jobs.

Usage:
  windforce dev                            everything in one process on SQLite: server, worker, scheduler, examples/hello
  windforce migrate [--database-url URL]   apply database migrations
  windforce server [--listen ADDR]         HTTP API, reaper, retention sweep, source poller
  windforce worker [--tags T] [--concurrency N]
                                           run jobs of the pinned commits (bun, node, python, command)
  windforce bench --database-url URL       measure the queue with no-op jobs
  windforce --version                      print the version

Client commands (WINDFORCE_URL, WINDFORCE_TOKEN, WINDFORCE_WORKSPACE or --url, --token, --workspace;
--json prints the server's JSON):
  windforce run APP/ACTION [--input JSON|@FILE|-] [--wait] [--timeout D] [--priority N]
                [--coalesce-key K] [--scheduled-for T]
                                           enqueue a job; --wait streams its logs and prints its result
                                           (exit 0 success, 1 failure, 2 canceled)
  windforce jobs list [--status S] [--app A] [--action X] [--tag T] [--trigger K] [--limit N] [--cursor C]
  windforce jobs get|result ID             a job; its result (exit code as for run --wait)
  windforce jobs logs ID [-f]              its logs; -f follows them until the job ends
  windforce jobs cancel ID [--reason R]    cancel a job (terminal)
  windforce jobs reopen ID [--force]       run a failed (--force: canceled) job again; operator scope
  windforce jobs requeue [ID…] [--app A] [--action X] [--tag T] [--batch N]
                                           move waiting jobs to the catalog as it is now (new commit, tag)
  windforce sources add ID URL [--branch B] | sources list | sources sync ID
  windforce schedules add APP/ACTION --cron EXPR [--timezone Z] [--input JSON] [--no-overlap]
  windforce schedules list | schedules rm ID
  windforce apps list                      apps and actions of the catalog
  windforce token create --workspace W --scopes read,run [--label L]
  windforce seed FILE.jsonl [--app A --action X]
                                           enqueue one job per line (trigger seed)
  windforce events sinks add --kind nats|webhook URL [--subject P] [--types a,b] [--id ID]
  windforce events sinks list | events sinks rm ID
  windforce events deliveries SINK [--status pending|delivered|failed]
  windforce events tail [--json] [--type a,b] [--after SEQ | --all]
                                           follow the workspace's events live (docs/EVENTS.md)
  windforce secrets set NAME [--description D] [--from-file F]
                                           set a workspace secret; the value from stdin or the file
  windforce secrets list | secrets rm NAME | secrets audit
  windforce secrets rotate-key --old-key K [--database-url URL]
                                           re-encrypt every secret with the current key (on the database)

Configuration comes from flags or WINDFORCE_* environment variables.
`

// Run runs the command line args (without the program name).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return &UsageError{Msg: "no command given"}
	}
	switch args[0] {
	case "--version", "-version", "version":
		fmt.Fprintln(stdout, "windforce", version())
		return nil
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	case "migrate":
		return runMigrate(ctx, args[1:], stdout, stderr)
	case "server":
		return RunServer(ctx, args[1:], stdout, stderr)
	case "worker":
		return RunWorker(ctx, args[1:], stdout, stderr)
	case "bench":
		return runBench(ctx, args[1:], stdout, stderr)
	case "run", "jobs", "sources", "schedules", "apps", "token", "seed", "events", "secrets":
		return runClientCommand(ctx, args, stdout, stderr)
	case "dev":
		return RunDev(ctx, args[1:], stdout, stderr)
	}
	fmt.Fprint(stderr, usage)
	return &UsageError{Msg: fmt.Sprintf("unknown command %q", args[0])}
}

// runClientCommand runs a client command of DESIGN §1 (args[0] names it).
func runClientCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmds := map[string]func(context.Context, []string, io.Writer, io.Writer) error{
		"run": runRun, "jobs": runJobs, "sources": runSources, "schedules": runSchedules,
		"apps": runApps, "token": runToken, "seed": runSeed, "events": runEvents, "secrets": runSecrets,
	}
	return cmds[args[0]](ctx, args[1:], stdout, stderr)
}

func version() string {
	if Version != "" {
		return Version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f config
	fs := newFlagSet("migrate", stderr)
	fs.bind(cmdMigrate, &f)
	if err := fs.parse(args); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	s, err := store.Open(ctx, f.dbURL, log)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	current, latest, err := s.SchemaVersion(ctx)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	fmt.Fprintf(stdout, "database schema at version %d of %d\n", current, latest)
	return nil
}
