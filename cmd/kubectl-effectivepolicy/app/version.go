package app

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/version"
)

func newVersionCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "The plugin's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v := version.Get()
			switch o.Output {
			case "json":
				b, err := json.MarshalIndent(v, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintln(o.Out, string(b))
				return err
			case "yaml":
				b, err := yaml.Marshal(v)
				if err != nil {
					return err
				}
				_, err = o.Out.Write(b)
				return err
			}
			_, err := fmt.Fprintf(o.Out, "kubectl-effectivepolicy %s (commit %s, built %s, %s, %s)\n", v.Version, v.Commit, v.BuildDate, v.GoVersion, v.Platform)
			return err
		},
	}
}
