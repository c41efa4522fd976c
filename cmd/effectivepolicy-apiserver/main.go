// Command effectivepolicy-apiserver is the aggregated API server that serves
// effectivepolicy.dev/v1alpha1 EffectivePolicy and ClusterEffectivePolicy.
package main

import (
	"os"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/cli"

	"github.com/effectivepolicy-dev/effectivepolicy/cmd/effectivepolicy-apiserver/app"
)

func main() {
	ctx := genericapiserver.SetupSignalContext()
	os.Exit(cli.Run(app.NewCommand(ctx)))
}
