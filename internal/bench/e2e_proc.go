package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is one windforce process of an end-to-end setup (dev, server or
// worker). Its stdout lines are collected so the setup can read what it
// printed (the URL, the admin token); its stderr is kept, bounded, for the
// error message when it fails.
type child struct {
	name string
	cmd  *exec.Cmd

	mu     sync.Mutex
	lines  []string
	more   chan struct{} // a line arrived (or stdout ended)
	done   chan struct{} // the process was waited for
	err    error         // its exit, once done is closed
	stderr tailBuffer
}

// startChild runs bin with args and env (the parent's environment without
// any WINDFORCE_* variable, plus env), so only what the setup passes
// configures it.
func startChild(name, bin string, env []string, args ...string) (*child, error) {
	c := &child{name: name, more: make(chan struct{}, 1), done: make(chan struct{})}
	c.cmd = exec.Command(bin, args...)
	c.cmd.Env = append(cleanEnv(), env...)
	c.cmd.Stderr = &c.stderr
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	go c.read(out)
	return c, nil
}

// cleanEnv is the parent's environment without WINDFORCE_* variables: a
// user's WINDFORCE_DATABASE_URL must not reach a bench process.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WINDFORCE_") {
			env = append(env, kv)
		}
	}
	return env
}

func (c *child) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		c.mu.Lock()
		c.lines = append(c.lines, sc.Text())
		c.mu.Unlock()
		select {
		case c.more <- struct{}{}:
		default:
		}
	}
	_, _ = io.Copy(io.Discard, r)
	err := c.cmd.Wait()
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	close(c.done)
}

// line waits up to within for a stdout line starting with prefix and
// returns the rest of it, trimmed.
func (c *child) line(prefix string, within time.Duration) (string, error) {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	seen := 0
	for {
		c.mu.Lock()
		for ; seen < len(c.lines); seen++ {
			if rest, ok := strings.CutPrefix(c.lines[seen], prefix); ok {
				c.mu.Unlock()
				return strings.TrimSpace(rest), nil
			}
		}
		c.mu.Unlock()
		select {
		case <-c.more:
		case <-c.done:
			c.mu.Lock()
			n := len(c.lines)
			c.mu.Unlock()
			if seen < n {
				continue // lines that arrived with the exit
			}
			return "", fmt.Errorf("%s exited (%v) before printing %q; stderr:\n%s", c.name, c.exitErr(), prefix, c.stderr.String())
		case <-deadline.C:
			return "", fmt.Errorf("%s printed no %q within %v; stderr:\n%s", c.name, prefix, within, c.stderr.String())
		}
	}
}

func (c *child) exitErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// exited reports whether the process has ended, with its stderr, so a
// failed request can say why.
func (c *child) exited() (bool, string) {
	select {
	case <-c.done:
		return true, fmt.Sprintf("%s exited (%v); stderr:\n%s", c.name, c.exitErr(), c.stderr.String())
	default:
		return false, ""
	}
}

// stop sends SIGTERM and waits for the process to drain and exit; after
// grace it is killed. An exit caused by the signal is not an error.
func (c *child) stop(grace time.Duration) error {
	select {
	case <-c.done:
	default:
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-c.done:
		case <-t.C:
			_ = c.cmd.Process.Kill()
			<-c.done
			return fmt.Errorf("%s did not stop within %v of SIGTERM and was killed", c.name, grace)
		}
	}
	if err := c.exitErr(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && !ee.Exited() {
			return nil // ended by the signal itself
		}
		return fmt.Errorf("%s: %w; stderr:\n%s", c.name, err, c.stderr.String())
	}
	return nil
}

// tailBuffer keeps the last 8 KiB written to it; safe for concurrent use.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

const tailBytes = 8 << 10

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if over := b.buf.Len() - tailBytes; over > 0 {
		b.buf.Next(over)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
