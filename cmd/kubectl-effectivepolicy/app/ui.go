package app

import (
	"github.com/spf13/cobra"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/ui"
)

type uiOptions struct {
	*Options
	port          int
	allNamespaces bool
}

func newUICommand(o *Options) *cobra.Command {
	u := &uiOptions{Options: o}
	cmd := &cobra.Command{
		Use:   "ui [--port N] [-A]",
		Short: "A local web page of the hierarchy and its policies",
		Long: `UI serves a page on 127.0.0.1 (a random port unless --port) that draws the
hierarchy as a graph, each object colored by the outcome of the policies that
reach it; a click shows its effective policies as describe prints them; the
Policy view draws what a policy reaches, the Request view traces a request,
the Change view reviews manifests to apply or delete as diff does.

The server asks the cluster with your kubeconfig's credentials, so the page
shows what kubectl would show you; the browser never gets them. It answers
only the printed URL (a per-run token), on loopback, read-only (a change is
reviewed, never applied). With --offline -f DIR it computes the same from
manifests (docs/ui.md).`,
		Example: `  kubectl effectivepolicy ui -n baker
  kubectl effectivepolicy ui -A --port 8080
  kubectl effectivepolicy ui --offline -f manifests/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return u.run(cmd) },
	}
	cmd.Flags().IntVar(&u.port, "port", 0, "The port to listen on, on 127.0.0.1 (default: a random free one).")
	cmd.Flags().BoolVarP(&u.allNamespaces, "all-namespaces", "A", false, "Show the objects of every namespace (default: the namespace of -n).")
	return cmd
}

func (u *uiOptions) run(cmd *cobra.Command) error {
	src, err := u.source()
	if err != nil {
		return err
	}
	ns := ""
	if !u.allNamespaces {
		if ns, err = src.Namespace(); err != nil {
			return err
		}
	}
	srv, err := ui.New(ui.Options{Source: src, Namespace: ns, Port: u.port, Out: u.Out})
	if err != nil {
		return err
	}
	return srv.Serve(commandContext(cmd))
}

// The page's Live view follows the cluster's watches; --offline has none.
var _ ui.Watcher = (*onlineSource)(nil)
