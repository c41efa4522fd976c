package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/tree"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/ui"
)

// addHTMLFlag adds --html to a command that prints trees.
func addHTMLFlag(cmd *cobra.Command, o *Options) {
	cmd.Flags().StringVar(&o.HTML, "html", "", "Also write the answer as one self-contained HTML page to this file (no network needed to open it; docs/ui.md).")
}

// writeHTML writes --html's file: the trees the command prints, and for
// the EffectivePolicies objs the graph of their targets, each with its
// stack. Nothing when --html is not given.
func (o *Options) writeHTML(roots []*tree.Node, objs []runtime.Object) error {
	if o.HTML == "" {
		return nil
	}
	report := ui.Report{Title: o.title, Trees: ui.Trees(roots...), Graph: ui.BuildGraph(objs), Targets: ui.Stacks(objs)}
	f, err := os.CreateTemp(filepath.Dir(o.HTML), ".effectivepolicy-*.html")
	if err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	// Written aside and renamed, so that a reader never sees half a page;
	// readable by all, as a file the shell creates (a CI artifact).
	err = f.Chmod(0o644)
	if err == nil {
		err = ui.WriteHTML(f, report)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), o.HTML)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("--html %s: %w", o.HTML, err)
	}
	return nil
}

// commandTitle is the command line, as the title of --html's page.
func commandTitle(cmd *cobra.Command, args []string) string {
	return strings.TrimSpace(cmd.CommandPath() + " " + strings.Join(args, " "))
}
