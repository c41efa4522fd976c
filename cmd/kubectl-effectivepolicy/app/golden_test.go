package app

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden with the current output")

// Manifests of the tests, relative to this package.
var (
	demo     = []string{"--offline", "-f", "../../../hack/demo"}
	scenario = func(name string) []string {
		return []string{
			"--offline", "-f", "../../../test/scenarios/crds", "-f", "../../../test/scenarios/topology.yaml",
			"-f", "../../../test/scenarios/" + name + "/policies.yaml",
		}
	}
	example1 = scenario("gep713-example1-direct")
	example2 = scenario("gep713-example2-defaults-overrides")
	example3 = scenario("gep713-example3-merged-specs")
	// A cluster-scoped policy kind, on a GatewayClass (testdata/cluster-policy.yaml).
	clusterPolicy = []string{"--offline", "-f", "testdata/cluster-policy.yaml", "-n", "infra"}
)

// run runs the plugin with args and returns what it wrote.
func run(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}
	cmd := newCommand(streams, func(*Options) (Source, error) {
		t.Fatalf("%v: the test asked the cluster", args)
		return nil, nil
	})
	cmd.SetArgs(args)
	err = cmd.Execute()
	return out.String(), errOut.String(), err
}

func with(base []string, args ...string) []string {
	return append(append([]string(nil), args...), base...)
}

// goldenCases are the outputs pinned in testdata/NAME.golden: describe,
// reach and trace, as trees (on a buffer: no color), as objects (-o yaml,
// json) and in color (--color=always), on the demo cluster (hack/demo)
// and the GEP-713 scenarios (test/scenarios).
var goldenCases = []struct {
	name string
	args []string
}{
	{"demo-describe-httproute", with(demo, "describe", "httproute/baker", "-n", "baker")},
	{"demo-describe-gateway", with(demo, "describe", "gateway/cupcakes", "-n", "infra")},
	{"demo-describe-namespace", with(demo, "describe", "namespace/baker")},
	{"demo-describe-service", with(demo, "describe", "svc", "baker", "frosting", "-n", "baker")},
	{"demo-describe-all-httproutes", with(demo, "describe", "httproutes", "-A")},
	{"demo-describe-httproute-yaml", with(demo, "describe", "httproute/baker", "-n", "baker", "-o", "yaml")},
	{"demo-describe-httproute-json", with(demo, "describe", "httproute/baker", "-n", "baker", "-o", "json")},
	{"demo-describe-namespace-color", with(demo, "describe", "namespace/baker", "--color=always")},
	{"demo-reach-retry-all", with(demo, "reach", "retrypolicy/retry-all", "-n", "baker")},
	{"demo-reach-gateway-timeouts", with(demo, "reach", "timeoutpolicies.demo.effectivepolicy.dev/gateway-timeouts", "-n", "infra")},
	{"demo-reach-all-timeoutpolicies", with(demo, "reach", "timeoutpolicy", "-A")},
	{"demo-reach-retry-all-json", with(demo, "reach", "retrypolicy/retry-all", "-n", "baker", "-o", "json")},
	{"demo-reach-retry-all-color", with(demo, "reach", "retrypolicy/retry-all", "-n", "baker", "--color=always")},
	{"demo-trace", with(demo, "trace", "--host", "baker.cupcakes.example", "--port", "80")},
	{"demo-trace-yaml", with(demo, "trace", "--host", "frosting.cupcakes.example", "--path", "/icing", "--header", "x-env=canary", "-o", "yaml")},
	{"demo-trace-no-route", with(demo, "trace", "--gateway", "infra/cupcakes", "--host", "cookies.cupcakes.example")},
	{"demo-trace-color", with(demo, "trace", "--host", "baker.cupcakes.example", "--color=always")},
	{"example1-describe-service", with(example1, "describe", "service/b1", "-n", "colors")},
	{"example1-reach-p2", with(example1, "reach", "colorpolicies.direct.colors.example.com/p2", "-n", "colors")},
	{"example2-describe-service", with(example2, "describe", "service/b1", "-n", "colors")},
	{"example2-describe-httproute", with(example2, "describe", "httproute/r4", "-n", "colors")},
	{"example2-reach-p1", with(example2, "reach", "colorpolicy/p1", "-n", "colors")},
	{"example2-trace", with(example2, "trace", "--host", "any.example")},
	{"example3-describe-service", with(example3, "describe", "service/b1", "-n", "colors")},
	{"example3-describe-httproute-yaml", with(example3, "describe", "httproute/r1", "-n", "colors", "-o", "yaml")},
	{"example3-reach-p3", with(example3, "reach", "colorpolicy/p3", "-n", "colors")},
	{"example3-trace-gateway", with(example3, "trace", "--gateway", "colors/g2", "--host", "any.example", "--method", "POST")},
	{"cluster-reach-all", with(clusterPolicy, "reach", "clusterretrypolicies")},
	{"cluster-reach-scoped-flag", with(clusterPolicy, "reach", "crp/everywhere", "--cluster-scoped", "-o", "yaml")},
	{"cluster-describe-gatewayclass", with(clusterPolicy, "describe", "gatewayclass/gc")},
	{"cluster-describe-gateway", with(clusterPolicy, "describe", "gtw", "gw")},
}

func TestGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, err := run(t, "", c.args...)
			if err != nil {
				t.Fatalf("%v: %v\nstderr: %s", c.args, err, errOut)
			}
			color := strings.HasSuffix(c.name, "-color")
			if got := strings.Contains(out, "\x1b["); got != color {
				t.Errorf("color escapes in the output: %v, want %v", got, color)
			}
			checkGolden(t, c.name, out)
		})
	}
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the output (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
