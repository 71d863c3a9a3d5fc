package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/examples"
	"github.com/windforce/windforce/runner"
	"github.com/windforce/windforce/server"
	"github.com/windforce/windforce/source"
)

// DevWorkspace is the workspace `windforce dev` registers the example in.
const DevWorkspace = "default"

// devSource is the id of the example's git source in DevWorkspace.
const devSource = "hello"

// parseDevFlags reads the settings of `windforce dev` from the
// environment and args and checks them. --dir is made absolute, and the
// database and object cache default to files in it.
func parseDevFlags(args []string, stderr io.Writer) (*config, error) {
	f := &config{}
	fs := newFlagSet("dev", stderr)
	fs.bind(cmdDev, f)
	if err := fs.parse(args); err != nil {
		return nil, err
	}
	if err := f.checkAPI(); err != nil {
		return nil, err
	}
	if err := f.checkConcurrency(); err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(f.dir)
	if err != nil {
		return nil, fmt.Errorf("dev: %w", err)
	}
	f.dir = dir
	if f.dbURL == "" {
		f.dbURL = "sqlite://" + filepath.Join(dir, "windforce.db")
	}
	if f.objectCache == "" {
		f.objectCache = "file://" + filepath.Join(dir, "objects")
	}
	return f, nil
}

// RunDev runs `windforce dev`: the server (API, reaper, sweeper, poller),
// a worker and the scheduler in one process on SQLite and a file object
// cache under --dir. On first start it creates a git repository from the
// bundled examples/hello and registers it as source "hello" of workspace
// "default". It prints the console URL and the admin token, and stops
// gracefully when ctx ends.
func RunDev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseDevFlags(args, stderr)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(f.dir, 0o700); err != nil {
		return fmt.Errorf("dev: create %s: %w", f.dir, err)
	}
	if f.secret, err = keptSecret(f.dir, "secret", f.secret); err != nil {
		return err
	}
	if f.adminToken, err = keptSecret(f.dir, "admin-token", f.adminToken); err != nil {
		return err
	}
	rc, err := f.runnerConfig()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	for _, sec := range []secret{{"WINDFORCE_SECRET", f.secret}, {"WINDFORCE_ADMIN_TOKEN", f.adminToken}} {
		if err := checkSecret(sec.name, sec.v); err != nil { // dev's own are long; a given one may not be
			log.Warn("weak secret: fine on a laptop, refused by windforce server", "err", err)
		}
	}
	warnWithoutBun(stderr)
	p, err := openAPIStore(ctx, f.dbURL, f.objectCache, f.zombieTimeout, log)
	if err != nil {
		return err
	}
	defer p.store.Close()
	p.syncer.AnyFileSource = true // one person's laptop: any local repository (DESIGN §10)
	if err := ensureExample(ctx, f.dir, p.store, p.syncer, log); err != nil {
		return err
	}
	if err := privateDevDir(f.dir); err != nil {
		return err
	}
	con, err := newConsole(p, f, log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", f.listen, err)
	}
	return serveDev(ctx, f, rc, p, con, ln, stdout, log)
}

// serveDev starts dev's services and its worker, whose jobs reach the API
// on ln, and serves the API on ln until ctx ends; then the worker stops
// first, so jobs finishing in the drain grace can still reach the API.
func serveDev(ctx context.Context, f *config, rc runner.Config, p *apiParts, con http.Handler, ln net.Listener, stdout io.Writer, log *slog.Logger) error {
	base := "http://" + ln.Addr().String()
	stopServices, err := startServices(context.WithoutCancel(ctx), f, p, log)
	if err != nil {
		_ = ln.Close()
		return err
	}
	defer stopServices()
	rc.URL = base
	w, r, err := startWorker(ctx, f, rc, p.store, p.syncer.Cache, p.metrics, log)
	if err != nil {
		_ = ln.Close()
		return err
	}
	defer r.Close()
	defer w.Stop() // when serving failed; after a normal stop it is a no-op
	cfg := f.apiConfig(p, con, log)
	cfg.Sandbox, cfg.Warm = r.Sandbox().Describe(), warmReady(r)
	api, err := server.New(cfg)
	if err != nil {
		_ = ln.Close()
		return err
	}
	fmt.Fprintf(stdout, "job sandbox %s\n", cfg.Sandbox)
	fmt.Fprintln(stdout, warmLine(r))
	printDevBanner(stdout, base, f.adminToken)
	return serve(ctx, ln, api.Handler(), f.limits.maxConns, io.Discard, log, w.Stop)
}

// privateDevDir makes dir searchable by other users (so the job sandbox
// can start bwrap directly as a job's uid, runner/sandbox/direct.go) and
// everything in it that is not a job's private to the worker: the
// database (SQLite gives its WAL files the database's mode), the object
// cache and the example's repository. secret and admin-token are written
// 0600 by keptSecret.
func privateDevDir(dir string) error {
	if err := os.Chmod(dir, 0o711); err != nil {
		return fmt.Errorf("dev: %w", err)
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "windforce.db*"))
	for _, p := range paths {
		if err := os.Chmod(p, 0o600); err != nil {
			return fmt.Errorf("dev: %w", err)
		}
	}
	for _, d := range []string{"objects", "git"} {
		if err := os.Chmod(filepath.Join(dir, d), 0o700); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("dev: %w", err)
		}
	}
	return nil
}

// printDevBanner tells a newcomer where to go. The "console:" and "admin
// token:" lines are read by tests and scripts; keep their form.
func printDevBanner(w io.Writer, base, token string) {
	fmt.Fprintf(w, "windforce dev is running\n")
	fmt.Fprintf(w, "console: %s/\n", base)
	fmt.Fprintf(w, "admin token: %s\n", token)
	fmt.Fprintf(w, "try (from this directory the client finds the token itself):\n")
	fmt.Fprintf(w, "  windforce run hello/greet --input '{\"name\":\"Ada\"}' --wait\n")
	fmt.Fprintf(w, "or from anywhere:\n  export WINDFORCE_URL=%s WINDFORCE_TOKEN=%s\n", base, token)
	fmt.Fprintf(w, "  curl -s -X POST -H \"Authorization: Bearer $WINDFORCE_TOKEN\" -d '{\"name\":\"Ada\"}' \"$WINDFORCE_URL/api/w/%s/jobs/run/hello/greet?wait=30s\"\n", DevWorkspace)
}

// warnWithoutBun says so when bun is missing: the example is TypeScript.
func warnWithoutBun(stderr io.Writer) {
	if _, err := exec.LookPath("bun"); err == nil {
		return
	}
	fmt.Fprintln(stderr, "windforce dev: bun is not installed, so TypeScript actions (the hello example) will fail.\n"+
		"  Install it with `npm install -g bun` (or see https://bun.sh), then run windforce dev again.")
}

// keptSecret returns given when set (and keeps it in dir/name, where the
// client looks for dev's token); otherwise the value kept in dir/name,
// generated on first use, so restarts keep tokens valid.
func keptSecret(dir, name, given string) (string, error) {
	path := filepath.Join(dir, name)
	if given != "" {
		// Kept too, so a client next to dev reads the token in force.
		if err := os.WriteFile(path, []byte(given+"\n"), 0o600); err != nil {
			return "", fmt.Errorf("dev: keep %s: %w", name, err)
		}
		return given, nil
	}
	data, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(data))) > 0 {
		return strings.TrimSpace(string(data)), nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("dev: read %s: %w", path, err)
	}
	buf := make([]byte, 24)
	_, _ = rand.Read(buf)
	v := hex.EncodeToString(buf)
	if name == "admin-token" {
		v = "wfdev_" + v
	}
	if err := os.WriteFile(path, []byte(v+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("dev: keep %s: %w", name, err)
	}
	return v, nil
}

// ensureExample registers the bundled example as a git source on first
// start (a bare repository under dir/git) and syncs it. A failed sync is
// logged, not fatal: dev still serves the API and console.
func ensureExample(ctx context.Context, dir string, s server.Store, syncer *source.Syncer, log *slog.Logger) error {
	_, err := s.GetSource(ctx, DevWorkspace, devSource)
	if err == nil {
		return nil
	}
	if !errors.Is(err, catalog.ErrNotFound) {
		return fmt.Errorf("dev: read source %s: %w", devSource, err)
	}
	bare := filepath.Join(dir, "git", "hello.git")
	if _, statErr := os.Stat(bare); errors.Is(statErr, fs.ErrNotExist) {
		if err := (&source.Git{}).InitRepo(ctx, bare, "main", examples.Hello(), "hello example"); err != nil {
			return fmt.Errorf("dev: %w", err)
		}
	}
	src := catalog.Source{Workspace: DevWorkspace, ID: devSource, URL: "file://" + bare, Branch: "main"}
	if err := syncer.AddSource(ctx, src); err != nil {
		return fmt.Errorf("dev: register source %s: %w", devSource, err)
	}
	if _, err := syncer.Sync(ctx, DevWorkspace, devSource); err != nil {
		log.Error("dev: sync of the example failed", "err", err)
	}
	return nil
}
