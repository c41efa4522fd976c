package compute

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/jsontest"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

func crdFor(group, kind, plural, version string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %s.%s}
spec:
  group: %s
  scope: Namespaced
  names: {kind: %s, plural: %s}
  versions: [{name: %s, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
`, plural, group, group, kind, plural, version)
}

// builtinCRDs are the CRDs, unlabeled, of policy kinds with built-in descriptors: Kuadrant's
// RateLimitPolicy, NGINX Gateway Fabric's ClientSettingsPolicy, Gateway API's
// BackendTLSPolicy and Envoy Gateway's ClientTrafficPolicy.
func builtinCRDs() string {
	return strings.Join([]string{
		crdFor("kuadrant.io", "RateLimitPolicy", "ratelimitpolicies", "v1"),
		crdFor("gateway.nginx.org", "ClientSettingsPolicy", "clientsettingspolicies", "v1alpha1"),
		crdFor("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies", "v1"),
		crdFor("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies", "v1alpha1"),
	}, "---\n")
}

// builtinPolicies are policies of the builtinCRDs kinds on the Gateway, its https listener, the
// route and Service svc's port http.
const builtinPolicies = `
apiVersion: kuadrant.io/v1
kind: RateLimitPolicy
metadata: {name: gw-rl, namespace: appns}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}
  overrides:
    strategy: merge
    limits: {global: {rates: [{limit: 100, window: 1m}]}}
---
apiVersion: kuadrant.io/v1
kind: RateLimitPolicy
metadata: {name: rt-rl, namespace: appns}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: rt}
  limits:
    global: {rates: [{limit: 1000, window: 1m}]}
    per-user: {rates: [{limit: 10, window: 1m}]}
---
apiVersion: gateway.nginx.org/v1alpha1
kind: ClientSettingsPolicy
metadata: {name: gw-cs, namespace: appns}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}
  body: {maxSize: 10m, timeout: 30s}
---
apiVersion: gateway.nginx.org/v1alpha1
kind: ClientSettingsPolicy
metadata: {name: rt-cs, namespace: appns}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: rt}
  body: {maxSize: 1m}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: tls, namespace: appns}
spec:
  targetRefs: [{group: "", kind: Service, name: svc, sectionName: http}]
  validation: {hostname: svc.example.com, wellKnownCACertificates: System}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: ctp-gw, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  timeout: {http: {idleTimeout: 5s}}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: ctp-https, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: https}]
  timeout: {http: {idleTimeout: 1s}}
`

func TestBuiltinDescriptors(t *testing.T) {
	objs := append(parseDocs(t, builtinCRDs()), parseDocs(t, baseTopology)...)
	objs = append(objs, stamp(parseDocs(t, builtinPolicies), 0)...)
	got, err := ComputeAll(objs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rt := got[Key{"appns", "rt"}]
	rl := findTP(rt, "HTTPRoute", "kuadrant.io", "RateLimitPolicy")
	if rl == nil {
		t.Fatalf("no RateLimitPolicy:\n%s", dump(rt))
	}
	// Gateway override (merge = patch) patches the route's limits map.
	if e := onlyEffective(t, rl, ""); jsontest.Canonical(t, e.Spec.Raw) != `{"limits":{"global":{"rates":[{"limit":100,"window":"1m"}]},"per-user":{"rates":[{"limit":10,"window":"1m"}]}}}` {
		t.Errorf("kuadrant merge: %s", e.Spec.Raw)
	}
	if o, _ := sourceOutcome(rl, "appns/rt-rl", "*"); o != v1alpha1.OutcomePartiallyEnforced {
		t.Errorf("rt-rl %s", o)
	}
	cs := findTP(rt, "HTTPRoute", "gateway.nginx.org", "ClientSettingsPolicy")
	if cs == nil || jsontest.Canonical(t, onlyEffective(t, cs, "").Spec.Raw) != `{"body":{"maxSize":"1m","timeout":"30s"}}` {
		t.Errorf("nginx client settings: %+v", cs)
	}
	tls := findTP(got[Key{"appns", "svc"}], "Service", "gateway.networking.k8s.io", "BackendTLSPolicy")
	if tls == nil || tls.Class != v1alpha1.ClassDirect || onlyEffective(t, tls, "http").Via[0].SectionName != "http" {
		t.Errorf("backend tls: %+v", tls)
	}
	ctp := findTP(got[Key{"appns", "gw"}], "Gateway", "gateway.envoyproxy.io", "ClientTrafficPolicy")
	if ctp == nil {
		t.Fatal("no ClientTrafficPolicy")
	}
	if e := onlyEffective(t, ctp, "https"); e.FieldSources["/timeout/http/idleTimeout"] != "appns/ctp-https" {
		t.Errorf("listener policy should win its section: %v", e.FieldSources)
	}
	if e := onlyEffective(t, ctp, ""); e.FieldSources["/timeout/http/idleTimeout"] != "appns/ctp-gw" {
		t.Errorf("gateway policy should win the object: %v", e.FieldSources)
	}
	// Direct: the Gateway-level ClientTrafficPolicy does not flow to routes.
	if findTP(rt, "HTTPRoute", "gateway.envoyproxy.io", "ClientTrafficPolicy") != nil {
		t.Error("direct policy reached the route")
	}
}

// TestConcurrentUse runs readers against a writer (meaningful with -race).
func TestConcurrentUse(t *testing.T) {
	topo, pols := genTopology(genSpec{namespaces: 2, gatewaysPerNS: 1, routesPerGW: 5, servicesPerNS: 2, policies: 20})
	e, _ := NewEngine(Options{})
	for _, o := range append(append([]*unstructured.Unstructured{}, topo...), pols...) {
		e.Upsert(o)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, k := range e.Keys() {
					e.Compute(k)
				}
				e.PolicyResources()
			}
		}()
	}
	for i := 0; i < 50; i++ {
		p := pols[i%len(pols)].DeepCopy()
		_ = unstructured.SetNestedField(p.Object, int64(i), "spec", "attempts")
		e.Upsert(p)
		if i%7 == 0 {
			e.Delete(p.GroupVersionKind().GroupKind(), p.GetNamespace(), p.GetName())
		}
	}
	close(stop)
	wg.Wait()
}

// TestBuiltinsDocumented: docs/compute.md's table of built-ins lists exactly the built-in kinds,
// each with the semantics its descriptor names, and no two built-ins describe one kind.
func TestBuiltinsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/compute.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "### Built-ins")
	if start < 0 {
		t.Fatal(`docs/compute.md has no "### Built-ins" section`)
	}
	documented := map[string]string{} // group/kind -> semantics column
	for _, line := range strings.Split(doc[start:], "\n")[1:] {
		if strings.HasPrefix(line, "#") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) < 6 || strings.TrimSpace(cells[1]) == "Kind" || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		documented[strings.TrimSpace(cells[2])+"/"+strings.TrimSpace(cells[1])] = strings.TrimSpace(cells[4])
	}
	seen := map[string]bool{}
	for _, d := range BuiltinDescriptors() {
		id := d.Group + "/" + d.Kind
		if seen[id] {
			t.Errorf("%s: two built-in descriptors", id)
		}
		seen[id] = true
		sem, ok := documented[id]
		switch {
		case !ok:
			t.Errorf("%s is built in but not in docs/compute.md's Built-ins table", id)
		case d.Semantics != "" && !strings.HasPrefix(sem, d.Semantics):
			t.Errorf("%s: docs say semantics %q, the descriptor %q", id, sem, d.Semantics)
		}
	}
	for id := range documented {
		if !seen[id] {
			t.Errorf("docs/compute.md's Built-ins table lists %s, which is not built in", id)
		}
	}
}

// TestBuiltinsReadable: the server's RBAC, in the kustomize base and in the Helm chart, lets it
// list and watch every built-in kind (a kind it may not read would be silently missing from
// every answer in a real cluster).
func TestBuiltinsReadable(t *testing.T) {
	for _, file := range []string{"../../artifacts/base/rbac-server-read.yaml", "../../charts/effectivepolicy/templates/rbac-server.yaml"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		granted := rbacResources(string(b))
		for _, d := range BuiltinDescriptors() {
			if res := pluralOf(d.Kind); !granted[d.Group+"/"+res] {
				t.Errorf("%s: no rule grants %s in group %s", file, res, d.Group)
			}
		}
	}
}

// rbacResources reads the apiGroups/resources pairs of a Role's rules, written as the server's
// RBAC files write them (apiGroups: [..] then resources: [..] or one per line below).
func rbacResources(doc string) map[string]bool {
	out := map[string]bool{}
	var groups []string
	inList := false
	for _, line := range strings.Split(doc, "\n") {
		trim := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trim, "- apiGroups:"):
			groups = flowList(strings.TrimPrefix(trim, "- apiGroups:"))
			inList = false
		case strings.HasPrefix(trim, "resources:"):
			rest := strings.TrimSpace(strings.TrimPrefix(trim, "resources:"))
			inList = rest == ""
			for _, r := range flowList(rest) {
				for _, g := range groups {
					out[g+"/"+r] = true
				}
			}
		case inList && strings.HasPrefix(trim, "- "):
			for _, g := range groups {
				out[g+"/"+strings.TrimSpace(strings.TrimPrefix(trim, "- "))] = true
			}
		default:
			inList = false
		}
	}
	return out
}

// flowList reads a YAML flow list of strings: ["a", "b"].
func flowList(s string) []string {
	s = strings.Trim(strings.TrimSpace(s), "[]")
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.Trim(strings.TrimSpace(p), `"`); p != "" || strings.Contains(s, `""`) {
			out = append(out, p)
		}
	}
	return out
}

// pluralOf is the resource name of a policy kind, as its CRDs name it.
func pluralOf(kind string) string {
	p := strings.ToLower(kind)
	if strings.HasSuffix(p, "y") {
		return strings.TrimSuffix(p, "y") + "ies"
	}
	return p + "s"
}

// TestBuiltinsInMatrix: docs/implementations.md has a row for every built-in kind, under the
// section of its implementation (whose heading names the semantics).
func TestBuiltinsInMatrix(t *testing.T) {
	b, err := os.ReadFile("../../docs/implementations.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{} // semantics/kind
	section := ""
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "## ") {
			section = ""
			if i := strings.Index(line, "(`"); i >= 0 {
				section = strings.SplitN(line[i+2:], "`", 2)[0]
			}
			continue
		}
		if cells := strings.Split(line, "|"); len(cells) > 2 && section != "" {
			kind := strings.Fields(strings.TrimSpace(cells[1]) + " ")
			if len(kind) > 0 {
				rows[section+"/"+kind[0]] = true
			}
		}
	}
	for _, d := range BuiltinDescriptors() {
		if !rows[d.Semantics+"/"+d.Kind] {
			t.Errorf("docs/implementations.md has no row for %s under its %s section", d.Kind, d.Semantics)
		}
	}
}
