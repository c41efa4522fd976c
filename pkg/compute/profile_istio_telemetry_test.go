package compute

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Istio's Telemetry through the engine, the root namespace included (which the end-to-end cases
// leave out): istio.io/istio release-1.31 pilot/pkg/model/telemetry_test.go TestTracing "override
// namespace" (the root namespace's provider, replaced by the namespace's) and telemetry.go
// namespaceWideTelemetryConfig (a younger namespace-wide Telemetry is never read).

func telemetry(ns, name, spec string) string {
	return "apiVersion: telemetry.istio.io/v1alpha1\nkind: Telemetry\nmetadata: {name: " + name +
		", namespace: " + ns + "}\nspec:\n" + spec + "\n---\n"
}

const (
	envoyTracing       = "  tracing: [{providers: [{name: envoy}]}]"
	stackdriverTracing = "  tracing: [{providers: [{name: stackdriver}]}]"
)

// telemetryWorld renders, per target, the effective Telemetry spec and each source's outcome.
func telemetryWorld(t *testing.T, pols string) map[Key]string {
	t.Helper()
	objs := append(descriptorCRDs(t, "telemetry.istio.io"), parseDocs(t, istioTopology)...)
	objs = append(objs, stamp(parseDocs(t, pols), 0)...)
	got, err := ComputeAll(objs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[Key]string{}
	for k, o := range got {
		tp := findTP(o, targetsOf(o)[0].Kind, "telemetry.istio.io", "Telemetry")
		if tp == nil {
			continue
		}
		var parts []string
		for _, e := range tp.Effective {
			parts = append(parts, strings.Trim(viaString(e.Via), "[]")+" = "+string(e.Spec.Raw))
		}
		for _, s := range tp.Sources {
			parts = append(parts, s.Namespace+"/"+s.Name+" "+string(s.Outcome))
		}
		sort.Strings(parts[len(tp.Effective):])
		out[k] = strings.Join(parts, "; ")
	}
	return out
}

func TestIstioTelemetryRootNamespace(t *testing.T) {
	gwRef := "  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]\n"
	cases := []struct {
		name, pols string
		want       map[Key]string
	}{
		{"override namespace", telemetry("istio-system", "default", envoyTracing) + telemetry("bar", "default", stackdriverTracing),
			map[Key]string{
				{"bar", "gw"}:          `Namespace/istio-system Namespace/bar = {"tracing":[{"providers":[{"name":"stackdriver"}]}]}; bar/default Enforced; istio-system/default Overridden`,
				{"istio-system", "gw"}: `Namespace/istio-system = {"tracing":[{"providers":[{"name":"envoy"}]}]}; istio-system/default Enforced`,
			}},
		{"the oldest namespace-wide Telemetry of the root namespace only", telemetry("istio-system", "b-old", envoyTracing) + telemetry("istio-system", "a-young", stackdriverTracing),
			map[Key]string{
				{"bar", "gw"}:          `Namespace/istio-system = {"tracing":[{"providers":[{"name":"envoy"}]}]}; istio-system/a-young Conflicted; istio-system/b-old Enforced`,
				{"istio-system", "gw"}: `Namespace/istio-system = {"tracing":[{"providers":[{"name":"envoy"}]}]}; istio-system/a-young Conflicted; istio-system/b-old Enforced`,
			}},
		{"a workload Telemetry of the root namespace reaches its own Gateway only", telemetry("istio-system", "default", envoyTracing) + telemetry("istio-system", "on-gw", gwRef+stackdriverTracing),
			map[Key]string{
				{"bar", "gw"}:          `Namespace/istio-system = {"tracing":[{"providers":[{"name":"envoy"}]}]}; istio-system/default Enforced`,
				{"istio-system", "gw"}: `Namespace/istio-system Gateway/gw = {"tracing":[{"providers":[{"name":"stackdriver"}]}]}; istio-system/default Overridden; istio-system/on-gw Enforced`,
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := telemetryWorld(t, c.pols); !reflect.DeepEqual(got, c.want) {
				for k, v := range got {
					t.Logf("got %v: %s", k, v)
				}
				t.Errorf("want %v", c.want)
			}
		})
	}
}

// TestIncrementalIstioTelemetry: a younger namespace-wide Telemetry takes over when the oldest
// goes, and a root namespace Telemetry reaches every Gateway; every key whose output changes is
// returned and the engine stays equal to a full recomputation.
func TestIncrementalIstioTelemetry(t *testing.T) {
	objs := append(descriptorCRDs(t, "telemetry.istio.io"), parseDocs(t, istioTopology)...)
	e, cur := feedIncremental(t, objs, nil)
	before := snapshot(t, e)
	tel := func(ns, name, spec string, sec int) *unstructured.Unstructured {
		return profileCreatedAt(parseDocs(t, telemetry(ns, name, spec))[0], sec)
	}
	gk := schema.GroupKind{Group: "telemetry.istio.io", Kind: "Telemetry"}
	muts := []mutation{
		{name: "namespace-wide in bar", upsert: []*unstructured.Unstructured{tel("bar", "old", envoyTracing, 1)}},
		{name: "a younger one, never read", upsert: []*unstructured.Unstructured{tel("bar", "young", stackdriverTracing, 2)}},
		{name: "mesh-wide in the root namespace", upsert: []*unstructured.Unstructured{tel("istio-system", "mesh", "  accessLogging: [{providers: [{name: envoy}]}]", 3)}},
		{name: "on the Gateway", upsert: []*unstructured.Unstructured{tel("bar", "gw", "  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]\n  accessLogging: [{disabled: true}]", 4)}},
		{name: "on the Service", upsert: []*unstructured.Unstructured{tel("foo", "svc", "  targetRefs: [{group: \"\", kind: Service, name: foo-svc}]\n"+envoyTracing, 5)}},
		{name: "the oldest goes: the younger is read", del: []objKey{{gk, "bar", "old"}}},
		{name: "mesh-wide goes", del: []objKey{{gk, "istio-system", "mesh"}}},
	}
	checkMutations(t, e, cur, before, muts)
}
