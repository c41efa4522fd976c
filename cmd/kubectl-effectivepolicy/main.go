// Command kubectl-effectivepolicy is the kubectl plugin of the
// effectivepolicy.dev API (kubectl effectivepolicy describe, reach, trace,
// diff; docs/plugin.md).
package main

import (
	"fmt"
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/effectivepolicy-dev/effectivepolicy/cmd/kubectl-effectivepolicy/app"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	if err := app.NewCommand(streams).Execute(); err != nil {
		if msg := app.Message(err); msg != "" {
			fmt.Fprintln(os.Stderr, "error:", msg)
		}
		os.Exit(app.ExitCode(err))
	}
}
