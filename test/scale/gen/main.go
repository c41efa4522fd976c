// Command gen writes the synthetic topology of package scale as multi-document
// YAML, for loading into a real cluster (kubectl apply --server-side -f).
//
//	go run ./test/scale/gen -scale=0.01 -o /tmp/topology.yaml
//
// Objects come in dependency order: CRDs, Namespaces, GatewayClass,
// Gateways, Services, HTTPRoutes, policies. Apply the CRDs first and wait for
// them to be established before the rest (-part=crds / -part=objects).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale"
)

func main() {
	var (
		s    = flag.Float64("scale", 1, "size relative to the large topology (20,000 routes, 5,000 policies)")
		seed = flag.Uint64("seed", 1, "seed of the pseudo-random choices")
		gw   = flag.Bool("gateway-crds", false, "also write minimal schema-less Gateway API CRDs (GatewayClass, Gateway, HTTPRoute); prefer the upstream ones")
		part = flag.String("part", "all", "all, crds (CustomResourceDefinitions only) or objects (everything else)")
		out  = flag.String("o", "-", "output file, - for stdout")
	)
	flag.Parse()
	if *part != "all" && *part != "crds" && *part != "objects" {
		fmt.Fprintln(os.Stderr, "-part must be all, crds or objects")
		os.Exit(2)
	}
	f := os.Stdout
	if *out != "-" {
		var err error
		if f, err = os.Create(*out); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n := 0
	for _, o := range scale.Generate(scale.Options{Scale: *s, Seed: *seed, GatewayAPICRDs: *gw}) {
		isCRD := o.GetKind() == "CustomResourceDefinition"
		if (*part == "crds" && !isCRD) || (*part == "objects" && isCRD) {
			continue
		}
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if n > 0 {
			_, _ = w.WriteString("---\n")
		}
		_, _ = w.Write(data)
		n++
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if f != os.Stdout {
		if err := f.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	fmt.Fprintf(os.Stderr, "gen: %d objects\n", n)
}
