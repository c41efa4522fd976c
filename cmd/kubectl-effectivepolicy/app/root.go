// Package app is the kubectl plugin's command line (docs/spec.md §11): describe a
// target, the reach of a policy, the trace of a request, the diff of a
// change — from the cluster, or from manifests with --offline. The commands only parse flags, fetch
// the API objects from a source (source.go) and print them (print.go); the
// trees are drawn by pkg/cli/render.
package app

import (
	"context"
	"flag"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"
)

// Options are the flags every command shares.
type Options struct {
	// ConfigFlags are kubectl's: --kubeconfig, --context, -n, ...
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	// Output is -o: "" (a tree), yaml or json.
	Output string
	// Color is --color: auto, always or never.
	Color string
	// HTML is --html: a file to write the answer to as a page.
	HTML string
	// title is the command line, for --html's page.
	title string
	// Offline and its manifests.
	Offline OfflineOptions

	// newOnline makes the cluster source (tests replace it).
	newOnline func(o *Options) (Source, error)
}

// OfflineOptions are the flags of --offline (diff reads -f and -R online
// too: the change to review).
type OfflineOptions struct {
	Enabled   bool
	Filenames []string
	Recursive bool
	// PolicyDescriptors and DefaultInheritedStrategy are the server's
	// flags of the same names, to compute as a server so configured does.
	PolicyDescriptors        string
	DefaultInheritedStrategy string
}

// NewCommand returns the plugin's root command, writing to streams.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return newCommand(streams, newOnlineSource)
}

// newCommand is NewCommand with the cluster source made by newOnline.
func newCommand(streams genericiooptions.IOStreams, newOnline func(o *Options) (Source, error)) *cobra.Command {
	o := &Options{
		ConfigFlags: genericclioptions.NewConfigFlags(true),
		IOStreams:   streams,
		Color:       "auto",
		newOnline:   newOnline,
	}
	cmd := &cobra.Command{
		Use:   "kubectl-effectivepolicy",
		Short: "What policies do to your Gateway API objects",
		Long: `kubectl effectivepolicy shows what Gateway API policies do (GEP-713):

  describe  the effective policies of a target, the policy that set each field,
            and why the other policies lost
  reach     what a policy reaches, and with which outcome
  trace     what happens to a request: listener, route, rule, backends and
            the policies of that path
  diff      what a change would do to the effective policies, before it
            lands (exit status 1 when some would change)
  check     whether expectations about the effective policies hold, for CI
            (exit status 1 when some fail)
  ui        a local web page of the same, drawn as a graph (--html FILE on
            the other commands writes one answer as a page)

It reads the effectivepolicy.dev API of the cluster, or with --offline -f DIR
computes the same answers from manifests, with no cluster.`,
		PersistentPreRun: func(cmd *cobra.Command, args []string) { o.title = commandTitle(cmd, args) },
		SilenceUsage:     true,
		SilenceErrors:    true,
		// As a kubectl plugin it is invoked as "kubectl effectivepolicy".
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl effectivepolicy"},
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.CompletionOptions.DisableDefaultCmd = true

	flags := cmd.PersistentFlags()
	o.ConfigFlags.AddFlags(flags)
	flags.StringVarP(&o.Output, "output", "o", o.Output, "Output format: yaml or json prints the API objects; empty prints a tree.")
	flags.StringVar(&o.Color, "color", o.Color, "Color the tree: auto (on a terminal, unless NO_COLOR or TERM=dumb), always or never.")
	flags.BoolVar(&o.Offline.Enabled, "offline", false, "Compute from the manifests given with -f instead of asking the cluster.")
	flags.StringSliceVarP(&o.Offline.Filenames, "filename", "f", nil, "With --offline (and for diff; check's expectations): a manifest file, a directory of them, or - for standard input (repeatable).")
	flags.BoolVarP(&o.Offline.Recursive, "recursive", "R", false, "Read the directories of manifests recursively.")
	flags.StringVar(&o.Offline.PolicyDescriptors, "policy-descriptors", "", "With --offline: a policy descriptor file, as the server's flag of that name.")
	flags.StringVar(&o.Offline.DefaultInheritedStrategy, "default-inherited-strategy", "", "With --offline: Atomic or Patch, as the server's flag of that name.")
	addKlogFlags(cmd)

	cmd.AddCommand(newDescribeCommand(o), newReachCommand(o), newTraceCommand(o), newDiffCommand(o), newCheckCommand(o), newUICommand(o), newVersionCommand(o))
	return cmd
}

// addKlogFlags adds klog's -v, for the client libraries' request logs.
func addKlogFlags(cmd *cobra.Command) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	if f := fs.Lookup("v"); f != nil {
		cmd.PersistentFlags().AddGoFlag(f)
	}
}

// validate checks the flags every command shares.
func (o *Options) validate() error {
	if err := o.validateFormat(); err != nil {
		return err
	}
	if o.Offline.Enabled && len(o.Offline.Filenames) == 0 {
		return fmt.Errorf("--offline needs manifests: -f FILE, -f DIR or -f -")
	}
	if !o.Offline.Enabled && len(o.Offline.Filenames) > 0 {
		return fmt.Errorf("-f reads manifests only with --offline")
	}
	return nil
}

// validateFormat checks -o and --color (diff takes -f online too).
func (o *Options) validateFormat() error {
	switch o.Output {
	case "", "tree", "yaml", "json":
	default:
		return fmt.Errorf("--output must be yaml, json or empty (a tree), not %q", o.Output)
	}
	switch o.Color {
	case "auto", "always", "never":
	default:
		return fmt.Errorf("--color must be auto, always or never, not %q", o.Color)
	}
	return nil
}

// source returns where the answers come from: the cluster or the manifests.
func (o *Options) source() (Source, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if o.Offline.Enabled {
		return newOfflineSource(o)
	}
	return o.newOnline(o)
}

// commandContext is the command's context (cobra's, else a background one).
func commandContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
