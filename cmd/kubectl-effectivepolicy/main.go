// Command kubectl-effectivepolicy is the kubectl plugin of the
// effectivepolicy.dev API (kubectl effectivepolicy describe, reach, trace,
// diff; docs/plugin.md).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/effectivepolicy-dev/effectivepolicy/cmd/kubectl-effectivepolicy/app"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	// Interrupted, the ui command's server shuts down and returns.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := app.NewCommand(streams).ExecuteContext(ctx)
	stop()
	if err != nil {
		if msg := app.Message(err); msg != "" {
			fmt.Fprintln(os.Stderr, "error:", msg)
		}
		os.Exit(app.ExitCode(err))
	}
}
