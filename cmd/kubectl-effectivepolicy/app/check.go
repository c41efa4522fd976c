package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/check"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/manifests"
)

// Exit statuses of check.
const (
	exitCheckFails  = 1
	exitCheckCannot = 2
)

type checkOptions struct {
	*Options
	junit string
}

func newCheckCommand(o *Options) *cobra.Command {
	c := &checkOptions{Options: o}
	cmd := &cobra.Command{
		Use:   "check -f EXPECTATIONS [--offline -f MANIFESTS...]",
		Short: "Whether expectations about effective policies hold (exit status 1 when some fail)",
		Long: `Check evaluates expectations (docs/check.md): documents of kind Expectations
(apiVersion effectivepolicy.dev/v1alpha1) that pick targets — by kind, namespace,
name, labels, or the routes attached to a Gateway or a listener — and say what must
hold for each: that a policy kind reaches it with an outcome, that fields of its
effective spec exist, equal a value or stay within a bound, that no source is
Conflicted or Invalid, that no kind's semantics are assumed.

Against the cluster it reads the EffectivePolicies (and, for label selectors and
attachedTo, the targets and the Gateway API objects) with your credentials; -f
gives the expectations. With --offline, -f gives the expectations and the
manifests together (documents of kind Expectations are the expectations, the rest
the manifests), and nothing asks a cluster: for a pull request's manifests in CI.

It prints a line per expectation and target, PASS or FAIL with what was found;
-o json prints the results as JSON, --junit FILE writes them as JUnit XML too.

Exit status: 0 when every expectation holds, 1 when some fail, 2 when they could
not be evaluated (a mistake in the expectations, given with its file and line; an
unreachable cluster).`,
		Example: `  kubectl effectivepolicy check -f expectations.yaml
  kubectl effectivepolicy check -f expectations.yaml --junit report.xml
  kubectl effectivepolicy check --offline -f expectations.yaml -f manifests/ -R
  kubectl effectivepolicy check --offline -f expectations.yaml -f manifests/ -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			err := c.run(commandContext(cmd), args)
			var ee *ExitError
			if err != nil && !errors.As(err, &ee) {
				err = &ExitError{Code: exitCheckCannot, Err: err}
			}
			return err
		},
	}
	// A bad flag means nothing was evaluated.
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &ExitError{Code: exitCheckCannot, Err: err} })
	cmd.Flags().StringVar(&c.junit, "junit", "", "Also write the results as JUnit XML to this file.")
	return cmd
}

func (c *checkOptions) run(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("check takes its expectations with -f FILE, not %q", args[0])
	}
	switch c.Output {
	case "", "json", "yaml":
	default:
		return fmt.Errorf("--output must be json, yaml or empty (lines), not %q", c.Output)
	}
	if len(c.Offline.Filenames) == 0 {
		return fmt.Errorf("check needs expectations: -f FILE")
	}
	docs, objs, err := c.read()
	if err != nil {
		return err
	}
	var src check.Source
	if c.Offline.Enabled {
		src, err = c.offlineCheckSource(objs)
	} else {
		src, err = c.onlineCheckSource()
	}
	if err != nil {
		return err
	}
	rep, err := check.Evaluate(ctx, src, docs)
	if err != nil {
		return err
	}
	if err := c.print(rep); err != nil {
		return err
	}
	if !rep.Holds() {
		return &ExitError{Code: exitCheckFails}
	}
	return nil
}

// read reads -f: the expectations, and with --offline the manifests.
func (c *checkOptions) read() ([]*check.Expectations, []*unstructured.Unstructured, error) {
	files, err := manifests.Files(manifests.Options{Filenames: c.Offline.Filenames, Recursive: c.Offline.Recursive, Stdin: c.In})
	if err != nil {
		return nil, nil, err
	}
	var (
		docs []*check.Expectations
		objs []*unstructured.Unstructured
	)
	for _, f := range files {
		// Only a file that may hold expectations is read as YAML nodes:
		// manifests are read by kubectl's rules alone.
		if bytes.Contains(f.Data, []byte(check.Kind)) {
			got, err := check.Parse(f.Name, f.Data)
			if err != nil {
				return nil, nil, err
			}
			docs = append(docs, got...)
		}
		all, err := manifests.Parse(f.Name, f.Data)
		if err != nil {
			return nil, nil, err
		}
		for _, u := range all {
			if check.IsExpectations(u.GetAPIVersion(), u.GetKind()) {
				continue
			}
			if !c.Offline.Enabled {
				return nil, nil, fmt.Errorf("%s: %s %s is a manifest: against the cluster -f takes expectations only (check manifests with --offline)", f.Name, u.GetKind(), u.GetName())
			}
			objs = append(objs, u)
		}
	}
	if len(docs) == 0 {
		return nil, nil, fmt.Errorf("no expectations in -f: a document of kind %s, apiVersion %s", check.Kind, check.APIVersion)
	}
	return docs, objs, nil
}

// print prints the report as -o asks, and as JUnit XML to --junit.
func (c *checkOptions) print(rep check.Report) error {
	if c.junit != "" {
		f, err := os.Create(c.junit)
		if err != nil {
			return err
		}
		werr := rep.WriteJUnit(f)
		if err := errors.Join(werr, f.Close()); err != nil {
			return fmt.Errorf("--junit %s: %w", c.junit, err)
		}
	}
	switch c.Output {
	case "json":
		return rep.WriteJSON(c.Out)
	case "yaml":
		var b bytes.Buffer
		if err := rep.WriteJSON(&b); err != nil {
			return err
		}
		out, err := yaml.JSONToYAML(b.Bytes())
		if err != nil {
			return err
		}
		_, err = c.Out.Write(out)
		return err
	}
	return rep.WriteText(c.Out)
}
