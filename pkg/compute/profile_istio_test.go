package compute

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Istio's root namespace and the policies without a target, from istio.io/istio release-1.31
// pilot/pkg/model/authorization_test.go TestAuthorizationPolicies_ListAuthorizationPolicies,
// cases "root namespace", "root namespace equals config namespace" and "root namespace and config
// namespace" (the root namespace istio-config there is istio-system, Istio's default, here), with
// the workload being the Istio gateway of a Gateway.

const istioTopology = `
apiVersion: v1
kind: Namespace
metadata: {name: istio-system}
---
apiVersion: v1
kind: Namespace
metadata: {name: bar}
---
apiVersion: v1
kind: Namespace
metadata: {name: foo}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio}
spec: {controllerName: istio.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: bar}
spec: {gatewayClassName: istio, listeners: [{name: http, port: 80, protocol: HTTP}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: istio-system}
spec: {gatewayClassName: istio, listeners: [{name: http, port: 80, protocol: HTTP}]}
---
apiVersion: v1
kind: Service
metadata: {name: foo-svc, namespace: foo}
spec: {ports: [{name: http, port: 80}]}
`

// istioPolicy is an AuthorizationPolicy named ns/name with the given spec lines (YAML, indented
// two spaces).
func istioPolicy(ns, name, spec string) string {
	return istioKindPolicy("AuthorizationPolicy", ns, name, spec)
}

// istioGroups are the API groups of the Istio kinds the tests use.
var istioGroups = map[string]string{
	"AuthorizationPolicy": "security.istio.io", "RequestAuthentication": "security.istio.io",
	"WasmPlugin": "extensions.istio.io", "TrafficExtension": "extensions.istio.io", "EnvoyFilter": "networking.istio.io",
}

// istioCRDs are CRDs (open schemas) for the Istio kinds.
func istioCRDs(t *testing.T) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, g := range []string{"security.istio.io", "extensions.istio.io", "networking.istio.io"} {
		out = append(out, descriptorCRDs(t, g)...)
	}
	return out
}

// istioKindPolicy is a policy of kind (security.istio.io) named ns/name with the given spec lines.
func istioKindPolicy(kind, ns, name, spec string) string {
	return "apiVersion: " + istioGroups[kind] + "/v1alpha1\nkind: " + kind + "\nmetadata: {name: " + name +
		", namespace: " + ns + "}\nspec:\n" + spec + "\n---\n"
}

// istioWorld computes the Istio topology with pols (stamped one second apart in order) and
// renders what AuthorizationPolicy gives each target.
func istioWorld(t *testing.T, pols string) map[Key]string {
	return istioKindWorld(t, "AuthorizationPolicy", pols)
}

// istioKindWorld is istioWorld for the policy kind kind.
func istioKindWorld(t *testing.T, kind, pols string) map[Key]string {
	t.Helper()
	objs := append(istioCRDs(t), parseDocs(t, istioTopology)...)
	objs = append(objs, stamp(parseDocs(t, pols), 0)...)
	got, err := ComputeAll(objs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[Key]string{}
	for k, o := range got {
		tp := findTP(o, targetsOf(o)[0].Kind, istioGroups[kind], kind)
		if tp == nil {
			continue
		}
		var b strings.Builder
		for _, e := range tp.Effective {
			b.WriteString(strings.Trim(viaString(e.Via), "[]") + " =")
			for i := 0; i < len(e.FieldSources); i++ {
				b.WriteString(" " + e.FieldSources["/"+itoa(i)])
			}
			b.WriteString(";")
		}
		b.WriteString(" sources")
		for _, s := range tp.Sources {
			b.WriteString(" " + s.Namespace + "/" + s.Name)
		}
		out[k] = b.String()
	}
	return out
}

func itoa(i int) string { return string(rune('0' + i)) }

func TestIstioRootNamespace(t *testing.T) {
	const allow = "  rules: [{to: [{operation: {methods: [GET]}}]}]"
	const deny = "  action: DENY\n  rules: [{to: [{operation: {methods: [GET]}}]}]"
	toSvc := "  targetRefs: [{group: \"\", kind: Service, name: foo-svc}]\n" + allow
	cases := []struct {
		name, pols string
		want       map[Key]string
	}{
		{"root namespace", istioPolicy("istio-system", "authz-1", allow), map[Key]string{
			{"bar", "gw"}:          "Namespace/istio-system = istio-system/authz-1; sources istio-system/authz-1",
			{"istio-system", "gw"}: "Namespace/istio-system = istio-system/authz-1; sources istio-system/authz-1",
		}},
		{"root namespace and config namespace, the root's first although newer",
			istioPolicy("bar", "authz-2", allow) + istioPolicy("istio-system", "authz-1", allow) + istioPolicy("bar", "authz-3", deny),
			map[Key]string{
				{"bar", "gw"}:          "Namespace/istio-system Namespace/bar = bar/authz-3 istio-system/authz-1 bar/authz-2; sources istio-system/authz-1 bar/authz-2 bar/authz-3",
				{"istio-system", "gw"}: "Namespace/istio-system = istio-system/authz-1; sources istio-system/authz-1",
			}},
		{"a waypoint (Service) takes no namespace-wide policy, the root's included",
			istioPolicy("istio-system", "authz-1", allow) + istioPolicy("foo", "authz-2", toSvc) + istioPolicy("foo", "authz-3", deny),
			map[Key]string{
				{"bar", "gw"}:          "Namespace/istio-system = istio-system/authz-1; sources istio-system/authz-1",
				{"istio-system", "gw"}: "Namespace/istio-system = istio-system/authz-1; sources istio-system/authz-1",
				{"foo", "foo-svc"}:     "Namespace/istio-system Namespace/foo Service/foo-svc = foo/authz-2; sources foo/authz-2",
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := istioWorld(t, c.pols); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %v\nwant %v", got, c.want)
			}
		})
	}
}

// TestIstioRootLast: RequestAuthentications and WasmPlugins are looked up in the workload's
// namespace first, then in the root namespace (pilot/pkg/model/authentication.go
// getConfigsForWorkload, push_context.go TrafficExtensionsByListenerInfo;
// pilot/pkg/model/authentication_test.go TestGetPoliciesForWorkload "Gateway targetRef foo
// namespace": foo/default, foo/with-targetref, then istio-config/default; push_context_test.go
// TestTrafficExtensions "ingress-testns-1": the root namespace's plugin last at its priority).
func TestIstioRootLast(t *testing.T) {
	const gwRef = "  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}\n"
	cases := []struct{ kind, spec, rootSpec string }{
		{"RequestAuthentication", "  jwtRules: [{issuer: https://example.org}]", "  jwtRules: [{issuer: https://example.org}]"},
		{"WasmPlugin", "  url: oci://example.com/a:v1\n  phase: AUTHN\n  priority: 10", "  url: oci://example.com/a:v1\n  phase: AUTHN\n  priority: 10"},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			pol := func(ns, name, spec string) string { return istioKindPolicy(c.kind, ns, name, spec) }
			pols := pol("istio-system", "default", c.rootSpec) + pol("bar", "default", c.spec) + pol("bar", "with-targetref", gwRef+c.spec)
			want := map[Key]string{
				{"bar", "gw"}:          "Namespace/istio-system Namespace/bar Gateway/gw = bar/default bar/with-targetref istio-system/default; sources istio-system/default bar/default bar/with-targetref",
				{"istio-system", "gw"}: "Namespace/istio-system = istio-system/default; sources istio-system/default",
			}
			if got := istioKindWorld(t, c.kind, pols); !reflect.DeepEqual(got, want) {
				t.Errorf("got  %v\nwant %v", got, want)
			}
		})
	}
}

// TestIstioEnvoyFilterAcrossNamespaces: EnvoyFilters are ordered by priority first, then the root
// namespace's before the workload namespace's (pilot/pkg/model/push_context.go EnvoyFilters;
// push_context_test.go TestEnvoyFilterOrderAcrossNamespaces: test-ns/filter-1 (-5) before
// istio-system/filter-2 (-1)).
func TestIstioEnvoyFilterAcrossNamespaces(t *testing.T) {
	ef := func(ns, name, prio string) string {
		return istioKindPolicy("EnvoyFilter", ns, name, "  priority: "+prio+"\n  configPatches: [{applyTo: HTTP_FILTER}]")
	}
	cases := []struct {
		name, pols, want string
	}{
		{"priority first (upstream)", ef("bar", "filter-1", "-5") + ef("istio-system", "filter-2", "-1"),
			"Namespace/istio-system Namespace/bar = bar/filter-1 istio-system/filter-2; sources istio-system/filter-2 bar/filter-1"},
		{"same priority: the root namespace's first, although newer", ef("bar", "filter-1", "0") + ef("istio-system", "filter-2", "0"),
			"Namespace/istio-system Namespace/bar = istio-system/filter-2 bar/filter-1; sources istio-system/filter-2 bar/filter-1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := istioKindWorld(t, "EnvoyFilter", c.pols)[Key{"bar", "gw"}]; got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

// TestIncrementalIstio: a policy in the root namespace reaches every target of the mesh, and a
// selector on the gateway-name pod label (in the root namespace: of every namespace's pods)
// follows the Gateways; every key whose output changes is
// returned and the engine stays equal to a full recomputation.
func TestIncrementalIstio(t *testing.T) {
	objs := append(istioCRDs(t), parseDocs(t, istioTopology)...)
	e, cur := feedIncremental(t, objs, nil)
	before := snapshot(t, e)
	pol := func(ns, name, spec string, sec int) *unstructured.Unstructured {
		return profileCreatedAt(parseDocs(t, istioPolicy(ns, name, spec))[0], sec)
	}
	ap := schema.GroupKind{Group: "security.istio.io", Kind: "AuthorizationPolicy"}
	gw := schema.GroupKind{Group: "gateway.networking.k8s.io", Kind: "Gateway"}
	newGW := parseDocs(t, "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gw2, namespace: bar}\nspec: {gatewayClassName: istio, listeners: [{name: http, port: 80, protocol: HTTP}]}")[0]
	otherClass := newGW.DeepCopy()
	otherClass.Object["spec"].(map[string]interface{})["gatewayClassName"] = "other"
	muts := []mutation{
		{name: "namespace-wide in bar", upsert: []*unstructured.Unstructured{pol("bar", "ns", "  action: DENY\n  rules: [{}]", 1)}},
		{name: "mesh-wide in the root namespace", upsert: []*unstructured.Unstructured{pol("istio-system", "mesh", "  rules: [{}]", 2)}},
		{name: "on the Service", upsert: []*unstructured.Unstructured{pol("foo", "svc", "  targetRefs: [{group: \"\", kind: Service, name: foo-svc}]\n  rules: [{}]", 3)}},
		{name: "selector on gw2's pods", upsert: []*unstructured.Unstructured{pol("bar", "sel", "  selector: {matchLabels: {gateway.networking.k8s.io/gateway-name: gw2}}\n  rules: [{}]", 4)}},
		{name: "selector on the class's pods", upsert: []*unstructured.Unstructured{pol("bar", "by-class", "  selector: {matchLabels: {gateway.networking.k8s.io/gateway-class-name: istio}}\n  rules: [{}]", 5)}},
		{name: "root selector on the class's pods", upsert: []*unstructured.Unstructured{pol("istio-system", "root-sel", "  selector: {matchLabels: {gateway.networking.k8s.io/gateway-class-name: istio}}\n  rules: [{}]", 6)}},
		{name: "gw2 appears", upsert: []*unstructured.Unstructured{newGW}},
		{name: "gw2 changes class", upsert: []*unstructured.Unstructured{otherClass}},
		{name: "mesh-wide becomes DENY", upsert: []*unstructured.Unstructured{pol("istio-system", "mesh", "  action: DENY\n  rules: [{}]", 2)}},
		{name: "mesh-wide goes", del: []objKey{{ap, "istio-system", "mesh"}}},
		{name: "gw2 goes", del: []objKey{{gw, "bar", "gw2"}}},
		{name: "root selector goes", del: []objKey{{ap, "istio-system", "root-sel"}}},
		{name: "namespace-wide goes", del: []objKey{{ap, "bar", "ns"}}},
	}
	checkMutations(t, e, cur, before, muts)
}
