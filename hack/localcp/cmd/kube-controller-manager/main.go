// Command kube-controller-manager is the upstream kube-controller-manager, for the local control
// plane. hack/local-up.sh runs it with only the namespace and garbage-collector controllers.
package main

import (
	"os"
	_ "time/tzdata"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
