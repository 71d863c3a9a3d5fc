// Command windforce runs code from git as durable jobs. See README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/windforce/windforce/internal/cli"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go stopOnSignals(sigs, cancel)
	err := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "windforce:", err)
		os.Exit(cli.ExitCode(err))
	}
}

// stopOnSignals turns the first SIGINT or SIGTERM into a graceful stop
// (servers finish their requests, workers let running jobs finish within
// the drain grace). A second one ends the process at once: the signal's
// default handling is restored and the signal sent again.
func stopOnSignals(sigs chan os.Signal, cancel context.CancelFunc) {
	<-sigs
	cancel()
	fmt.Fprintln(os.Stderr, "windforce: stopping; interrupt again to exit at once")
	sig := <-sigs
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	if s, ok := sig.(syscall.Signal); ok {
		_ = syscall.Kill(os.Getpid(), s)
	}
	os.Exit(1) // not reached once the signal's default action ends the process
}
