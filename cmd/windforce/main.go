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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go forceOnSecondSignal(ctx, stop)
	err := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "windforce:", err)
		os.Exit(cli.ExitCode(err))
	}
}

// forceOnSecondSignal waits for the first SIGINT or SIGTERM, which asks for
// a graceful stop (servers finish their requests, workers let running jobs
// finish within the drain grace), then hands the signals back to Go's
// default handling: a second one ends the process at once.
func forceOnSecondSignal(ctx context.Context, stop context.CancelFunc) {
	<-ctx.Done()
	stop()
	fmt.Fprintln(os.Stderr, "windforce: stopping; interrupt again to exit at once")
}
