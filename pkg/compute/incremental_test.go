package compute

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

type objKey struct {
	gk       schema.GroupKind
	ns, name string
}

func keyOfObj(o *unstructured.Unstructured) objKey {
	return objKey{o.GroupVersionKind().GroupKind(), o.GetNamespace(), o.GetName()}
}

// snapshot renders every output of an engine as JSON.
func snapshot(t testing.TB, e *Engine) map[Key]string {
	out := map[Key]string{}
	for _, k := range e.Keys() {
		o, ok := e.Compute(k)
		if !ok {
			t.Fatalf("Keys lists %v but Compute has no output", k)
		}
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = string(b)
	}
	return out
}

func snapshotAll(t testing.TB, objs map[objKey]*unstructured.Unstructured) map[Key]string {
	var l []*unstructured.Unstructured
	keys := make([]objKey, 0, len(objs))
	for k := range objs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
	for _, k := range keys {
		l = append(l, objs[k])
	}
	all, err := ComputeAll(l, Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[Key]string{}
	for k, o := range all {
		b, _ := json.Marshal(o)
		out[k] = string(b)
	}
	return out
}

type mutation struct {
	name   string
	upsert []*unstructured.Unstructured
	del    []objKey
}

// TestIncremental applies mutations one by one and checks, after each, that
// the engine equals a full recomputation and that every key whose output
// changed was returned.
func TestIncremental(t *testing.T) {
	e, cur, before, muts := incrementalWorld(t)
	checkMutations(t, e, cur, before, muts)
}

// incrementalWorld is a generated topology fed to an engine in shuffled
// order, the objects it was fed, their outputs, and mutations of every kind.
func incrementalWorld(t *testing.T) (*Engine, map[objKey]*unstructured.Unstructured, map[Key]string, []mutation) {
	topo, pols := genTopology(genSpec{namespaces: 3, gatewaysPerNS: 2, routesPerGW: 4, servicesPerNS: 3, policies: 40, withListenerSet: true})
	cur := map[objKey]*unstructured.Unstructured{}
	e, _ := NewEngine(Options{})
	for _, o := range append(topo, pols...) {
		cur[keyOfObj(o)] = o
	}
	// Feed in a shuffled order (CRDs first, as informers would).
	order := append([]*unstructured.Unstructured{}, append(topo, pols...)...)
	rand.New(rand.NewSource(1)).Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for _, o := range order {
		if isCRD(o) {
			e.Upsert(o)
		}
	}
	for _, o := range order {
		if !isCRD(o) {
			e.Upsert(o)
		}
	}
	before := snapshot(t, e)
	if want := snapshotAll(t, cur); !reflect.DeepEqual(before, want) {
		for k := range unionKeys(before, want) {
			if before[k] != want[k] {
				t.Errorf("%v:\n got %s\nwant %s", k, before[k], want[k])
			}
		}
		t.Fatalf("initial state differs from ComputeAll (%d vs %d keys)", len(before), len(want))
	}
	get := func(gk schema.GroupKind, ns, name string) *unstructured.Unstructured {
		o := cur[objKey{gk, ns, name}]
		if o == nil {
			t.Fatalf("no %v %s/%s", gk, ns, name)
		}
		return o.DeepCopy()
	}
	gwGK := schema.GroupKind{Group: topology.GatewayGroup, Kind: "Gateway"}
	rtGK := schema.GroupKind{Group: topology.GatewayGroup, Kind: "HTTPRoute"}
	rpGK := schema.GroupKind{Group: "example.com", Kind: "RetryPolicy"}
	tpGK := schema.GroupKind{Group: "example.com", Kind: "TimeoutPolicy"}
	svcGK := schema.GroupKind{Kind: "Service"}
	nsGK := schema.GroupKind{Kind: "Namespace"}
	crdGK := schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

	var muts []mutation
	{ // edit a gateway policy's value
		p := get(rpGK, "ns-1", "pol-1")
		_ = unstructured.SetNestedField(p.Object, int64(99), "spec", "attempts")
		muts = append(muts, mutation{name: "edit gateway policy", upsert: []*unstructured.Unstructured{p}})
	}
	{ // retarget a route policy to another route
		p := get(rpGK, "ns-0", "pol-3")
		_ = unstructured.SetNestedSlice(p.Object, []interface{}{ref(topology.GatewayGroup, "HTTPRoute", "route-5")}, "spec", "targetRefs")
		muts = append(muts, mutation{name: "retarget policy", upsert: []*unstructured.Unstructured{p}})
	}
	muts = append(muts, mutation{name: "delete namespace policy", del: []objKey{{rpGK, "ns-0", "pol-0"}}})
	{ // new policy on a listener
		p := u("example.com/v1", "RetryPolicy", "ns-0", "late", map[string]interface{}{
			"targetRefs": []interface{}{map[string]interface{}{"group": topology.GatewayGroup, "kind": "Gateway", "name": "gw-0", "sectionName": "http"}},
			"overrides":  map[string]interface{}{"attempts": int64(1)},
		})
		p.SetCreationTimestamp(metav1NewTime(baseTime.Add(1e6)))
		muts = append(muts, mutation{name: "add listener policy", upsert: []*unstructured.Unstructured{p}})
	}
	{ // move a route to another gateway
		r := get(rtGK, "ns-0", "route-1")
		_ = unstructured.SetNestedSlice(r.Object, []interface{}{map[string]interface{}{"name": "gw-1"}}, "spec", "parentRefs")
		muts = append(muts, mutation{name: "move route", upsert: []*unstructured.Unstructured{r}})
	}
	{ // change a route's backends
		r := get(rtGK, "ns-1", "route-9")
		_ = unstructured.SetNestedSlice(r.Object, []interface{}{map[string]interface{}{"name": "main", "backendRefs": []interface{}{map[string]interface{}{"name": "svc-2"}}}}, "spec", "rules")
		muts = append(muts, mutation{name: "route backends", upsert: []*unstructured.Unstructured{r}})
	}
	muts = append(muts, mutation{name: "delete gateway", del: []objKey{{gwGK, "ns-1", "gw-0"}}})
	muts = append(muts, mutation{name: "re-add gateway", upsert: []*unstructured.Unstructured{get(gwGK, "ns-1", "gw-0")}})
	{ // gateway https listener admits only labeled namespaces
		g := get(gwGK, "ns-0", "gw-1")
		ls, _, _ := unstructured.NestedSlice(g.Object, "spec", "listeners")
		ls[1].(map[string]interface{})["allowedRoutes"] = map[string]interface{}{"namespaces": map[string]interface{}{"from": "Selector", "selector": map[string]interface{}{"matchLabels": map[string]interface{}{"idx": "0"}}}}
		_ = unstructured.SetNestedSlice(g.Object, ls, "spec", "listeners")
		muts = append(muts, mutation{name: "listener selector", upsert: []*unstructured.Unstructured{g}})
	}
	{ // namespace labels change
		n := get(nsGK, "", "ns-0")
		n.SetLabels(map[string]string{"idx": "9"})
		muts = append(muts, mutation{name: "namespace labels", upsert: []*unstructured.Unstructured{n}})
	}
	muts = append(muts, mutation{name: "delete service", del: []objKey{{svcGK, "ns-0", "svc-0"}}})
	muts = append(muts, mutation{name: "re-add service", upsert: []*unstructured.Unstructured{get(svcGK, "ns-0", "svc-0")}})
	{ // direct policy: new established one loses to the older
		p := get(tpGK, "ns-0", "pol-6")
		p.SetName("pol-6-copy")
		p.SetCreationTimestamp(metav1NewTime(baseTime.Add(2e6)))
		muts = append(muts, mutation{name: "conflicting direct", upsert: []*unstructured.Unstructured{p}})
	}
	{ // cross-namespace policy, then its ReferenceGrant
		p := u("example.com/v1", "RetryPolicy", "ns-0", "cross", map[string]interface{}{
			"targetRefs": []interface{}{map[string]interface{}{"group": topology.GatewayGroup, "kind": "HTTPRoute", "name": "route-9", "namespace": "ns-1"}},
			"attempts":   int64(5),
		})
		muts = append(muts, mutation{name: "cross-namespace policy", upsert: []*unstructured.Unstructured{p}})
		g := u("gateway.networking.k8s.io/v1beta1", "ReferenceGrant", "ns-1", "grant", map[string]interface{}{
			"from": []interface{}{map[string]interface{}{"group": "example.com", "kind": "RetryPolicy", "namespace": "ns-0"}},
			"to":   []interface{}{map[string]interface{}{"group": topology.GatewayGroup, "kind": "HTTPRoute"}},
		})
		muts = append(muts, mutation{name: "reference grant", upsert: []*unstructured.Unstructured{g}})
	}
	{ // a policy on a route that does not exist yet, then the route
		p := u("example.com/v1", "RetryPolicy", "ns-2", "early", map[string]interface{}{
			"targetRefs": []interface{}{ref(topology.GatewayGroup, "HTTPRoute", "newcomer")},
			"attempts":   int64(8),
		})
		muts = append(muts, mutation{name: "policy before target", upsert: []*unstructured.Unstructured{p}})
		r := u("gateway.networking.k8s.io/v1", "HTTPRoute", "ns-2", "newcomer", map[string]interface{}{
			"parentRefs": []interface{}{map[string]interface{}{"name": "gw-0"}},
			"rules":      []interface{}{map[string]interface{}{"backendRefs": []interface{}{map[string]interface{}{"name": "svc-1"}}}},
		})
		muts = append(muts, mutation{name: "target arrives", upsert: []*unstructured.Unstructured{r}})
	}
	{ // labels on a route selected by a selector policy
		p := u("example.com/v1", "RetryPolicy", "ns-2", "selector", map[string]interface{}{
			"targetRefs": []interface{}{map[string]interface{}{"group": topology.GatewayGroup, "kind": "HTTPRoute", "selector": map[string]interface{}{"matchLabels": map[string]interface{}{"pick": "me"}}}},
			"attempts":   int64(4),
		})
		muts = append(muts, mutation{name: "selector policy", upsert: []*unstructured.Unstructured{p}})
		r := get(rtGK, "ns-2", "route-17")
		r.SetLabels(map[string]string{"pick": "me"})
		muts = append(muts, mutation{name: "label route", upsert: []*unstructured.Unstructured{r}})
	}
	{ // spec-only edits (contexts stay cached): route, namespace, direct, rule
		for _, pk := range []struct {
			gk       schema.GroupKind
			ns, name string
		}{{rpGK, "ns-1", "pol-4"}, {rpGK, "ns-1", "pol-16"}, {tpGK, "ns-2", "pol-14"}, {rpGK, "ns-2", "pol-5"}, {rpGK, "ns-1", "pol-1"}} {
			p := get(pk.gk, pk.ns, pk.name)
			_ = unstructured.SetNestedField(p.Object, map[string]interface{}{"changed": pk.name}, "spec", "extra")
			muts = append(muts, mutation{name: "spec edit " + pk.name, upsert: []*unstructured.Unstructured{p}})
		}
		p := get(rpGK, "ns-1", "pol-1")
		p.SetCreationTimestamp(metav1NewTime(baseTime.Add(-1e9)))
		muts = append(muts, mutation{name: "older timestamp", upsert: []*unstructured.Unstructured{p}})
	}
	{ // hostnames: a listener gets one, then a route's hostnames stop intersecting it
		g := get(gwGK, "ns-2", "gw-0")
		ls, _, _ := unstructured.NestedSlice(g.Object, "spec", "listeners")
		ls[0].(map[string]interface{})["hostname"] = "*.example.com"
		_ = unstructured.SetNestedSlice(g.Object, ls, "spec", "listeners")
		muts = append(muts, mutation{name: "listener hostname", upsert: []*unstructured.Unstructured{g}})
		r := get(rtGK, "ns-2", "route-16")
		_ = unstructured.SetNestedStringSlice(r.Object, []string{"app.example.net"}, "spec", "hostnames")
		muts = append(muts, mutation{name: "route hostnames miss the listener", upsert: []*unstructured.Unstructured{r}})
		r = r.DeepCopy()
		_ = unstructured.SetNestedStringSlice(r.Object, []string{"app.example.net", "app.example.com"}, "spec", "hostnames")
		muts = append(muts, mutation{name: "route hostnames hit it again", upsert: []*unstructured.Unstructured{r}})
	}
	{ // the shared Services' ReferenceGrant: revoked, then granted to every namespace
		grantGK := schema.GroupKind{Group: topology.GatewayGroup, Kind: "ReferenceGrant"}
		g := get(grantGK, "shared", "routes")
		muts = append(muts, mutation{name: "revoke backend grant", del: []objKey{{grantGK, "shared", "routes"}}})
		from, _, _ := unstructured.NestedSlice(g.Object, "spec", "from")
		from = append(from, map[string]interface{}{"group": topology.GatewayGroup, "kind": "HTTPRoute", "namespace": "ns-2"})
		_ = unstructured.SetNestedSlice(g.Object, from, "spec", "from")
		muts = append(muts, mutation{name: "grant backends to every namespace", upsert: []*unstructured.Unstructured{g}})
	}
	{ // a mesh route under a Service's port, its policy, the port renumbered, the route moved to a Gateway
		mr := u("gateway.networking.k8s.io/v1", "HTTPRoute", "ns-1", "mesh-rt", map[string]interface{}{
			"parentRefs": []interface{}{map[string]interface{}{"group": "", "kind": "Service", "name": "svc-0", "port": int64(80)}},
			"rules": []interface{}{map[string]interface{}{"name": "main", "backendRefs": []interface{}{
				map[string]interface{}{"name": "svc-0"}, map[string]interface{}{"name": "svc-1"}}}},
		})
		muts = append(muts, mutation{name: "mesh route arrives", upsert: []*unstructured.Unstructured{mr}})
		p := u("example.com/v1", "RetryPolicy", "ns-1", "mesh-port", map[string]interface{}{
			"targetRefs": []interface{}{map[string]interface{}{"group": "", "kind": "Service", "name": "svc-0", "sectionName": "http"}},
			"defaults":   map[string]interface{}{"attempts": int64(6)},
		})
		muts = append(muts, mutation{name: "policy on the mesh route's port", upsert: []*unstructured.Unstructured{p}})
		svc := get(svcGK, "ns-1", "svc-0")
		_ = unstructured.SetNestedSlice(svc.Object, []interface{}{map[string]interface{}{"name": "http", "port": int64(8080)}}, "spec", "ports")
		muts = append(muts, mutation{name: "mesh Service port renumbered", upsert: []*unstructured.Unstructured{svc}})
		svc = svc.DeepCopy()
		_ = unstructured.SetNestedSlice(svc.Object, []interface{}{map[string]interface{}{"name": "web", "port": int64(80)}}, "spec", "ports")
		muts = append(muts, mutation{name: "mesh Service port renamed back to 80", upsert: []*unstructured.Unstructured{svc}})
		mr = mr.DeepCopy()
		_ = unstructured.SetNestedSlice(mr.Object, []interface{}{map[string]interface{}{"name": "gw-0"}}, "spec", "parentRefs")
		muts = append(muts, mutation{name: "mesh route moves to a Gateway", upsert: []*unstructured.Unstructured{mr}})
		mr = mr.DeepCopy()
		_ = unstructured.SetNestedSlice(mr.Object, []interface{}{map[string]interface{}{"group": "", "kind": "Service", "name": "svc-1"}}, "spec", "parentRefs")
		muts = append(muts, mutation{name: "mesh route under its own backend", upsert: []*unstructured.Unstructured{mr}})
		muts = append(muts, mutation{name: "delete the mesh Service", del: []objKey{{svcGK, "ns-1", "svc-1"}}})
		muts = append(muts, mutation{name: "re-add the mesh Service", upsert: []*unstructured.Unstructured{get(svcGK, "ns-1", "svc-1")}})
	}
	{ // a policy kind found by its schema, then refused by the label
		crd := parseDocsNoT(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: schemapolicies.found.example}
spec:
  group: found.example
  scope: Namespaced
  names: {kind: SchemaPolicy, plural: schemapolicies}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
            properties:
              targetRefs: {type: array, items: {type: object, properties: {group: {type: string}, kind: {type: string}, name: {type: string}}}}
              defaults: {type: object, x-kubernetes-preserve-unknown-fields: true}
`)[0]
		p := u("found.example/v1", "SchemaPolicy", "ns-0", "found", map[string]interface{}{
			"targetRefs": []interface{}{ref(topology.GatewayGroup, "Gateway", "gw-0")},
			"defaults":   map[string]interface{}{"found": int64(1)},
		})
		// The informer of a kind starts when its CRD is recognized: CRD first.
		muts = append(muts, mutation{name: "an unlabeled CRD with a policy schema", upsert: []*unstructured.Unstructured{crd}})
		muts = append(muts, mutation{name: "a policy of its kind", upsert: []*unstructured.Unstructured{p}})
		refused := crd.DeepCopy()
		refused.SetLabels(map[string]string{"gateway.networking.k8s.io/policy": "none"})
		muts = append(muts, mutation{name: "the label says it is no policy", upsert: []*unstructured.Unstructured{refused}})
	}
	muts = append(muts, mutation{name: "delete direct CRD", del: []objKey{{crdGK, "", "timeoutpolicies.example.com"}}})
	muts = append(muts, mutation{name: "no-op re-upsert", upsert: []*unstructured.Unstructured{get(rtGK, "ns-0", "route-0")}})
	return e, cur, before, muts
}

// checkMutations applies muts one by one to e and to cur (the objects a full recomputation is
// fed) and checks after each that e equals a full recomputation and that every key whose
// output changed was returned.
func checkMutations(t *testing.T, e *Engine, cur map[objKey]*unstructured.Unstructured, before map[Key]string, muts []mutation) {
	t.Helper()
	crdGK := schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
	for _, m := range muts {
		var ret []Key
		for _, o := range m.upsert {
			cur[keyOfObj(o)] = o
			ret = append(ret, e.Upsert(o)...)
		}
		for _, d := range m.del {
			if crd := cur[d]; d.gk == crdGK && crd != nil {
				// The engine forgets the policies of a deleted CRD, as the
				// informers stop; so does the reference.
				group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
				kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
				for k := range cur {
					if k.gk == (schema.GroupKind{Group: group, Kind: kind}) {
						delete(cur, k)
					}
				}
			}
			delete(cur, d)
			ret = append(ret, e.Delete(d.gk, d.ns, d.name)...)
		}
		after := snapshot(t, e)
		want := snapshotAll(t, cur)
		if !reflect.DeepEqual(after, want) {
			for k := range unionKeys(after, want) {
				if after[k] != want[k] {
					t.Errorf("%s: %v differs from full recomputation:\n got %s\nwant %s", m.name, k, after[k], want[k])
				}
			}
			t.FailNow()
		}
		returned := map[Key]bool{}
		for _, k := range ret {
			returned[k] = true
		}
		changed := 0
		for k := range unionKeys(before, after) {
			if before[k] != after[k] {
				changed++
				if !returned[k] {
					t.Errorf("%s: %v changed but was not returned (returned %v)", m.name, k, ret)
				}
			}
		}
		t.Logf("%s: %d changed, %d returned", m.name, changed, len(returned))
		before = after
	}
}

func unionKeys(a, b map[Key]string) map[Key]bool {
	out := map[Key]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// TestDeterminism: shuffled inputs give byte-identical outputs.
func TestDeterminism(t *testing.T) {
	topo, pols := genTopology(genSpec{namespaces: 2, gatewaysPerNS: 2, routesPerGW: 3, servicesPerNS: 2, policies: 30, withListenerSet: true})
	all := append(append([]*unstructured.Unstructured{}, topo...), pols...)
	render := func(m map[Key]runtime.Object) map[Key]string {
		out := map[Key]string{}
		for k, o := range m {
			b, _ := json.Marshal(o)
			out[k] = string(b)
		}
		return out
	}
	first, _ := ComputeAll(all, Options{})
	want := render(first)
	for seed := int64(0); seed < 5; seed++ {
		sh := append([]*unstructured.Unstructured{}, all...)
		rand.New(rand.NewSource(seed)).Shuffle(len(sh), func(i, j int) { sh[i], sh[j] = sh[j], sh[i] })
		got, _ := ComputeAll(sh, Options{})
		if g := render(got); !reflect.DeepEqual(g, want) {
			t.Fatalf("seed %d: outputs differ", seed)
		}
		if !reflect.DeepEqual(got, first) {
			t.Fatalf("seed %d: objects not deep-equal", seed)
		}
	}
}

// TestUpsertKeepsNoReferences: mutating an object after Upsert changes
// nothing until it is upserted again.
func TestUpsertKeepsNoReferences(t *testing.T) {
	objs := worldObjs(t, baseTopology, `
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: p, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  attempts: 1
`)
	e, _ := NewEngine(Options{})
	for _, o := range objs {
		e.Upsert(o)
	}
	before := snapshot(t, e)
	for _, o := range objs {
		if spec, ok := o.Object["spec"].(map[string]interface{}); ok {
			spec["attempts"] = int64(42)
			spec["gatewayClassName"] = "other"
		}
	}
	if after := snapshot(t, e); !reflect.DeepEqual(before, after) {
		t.Fatal("engine output changed when the caller mutated its objects")
	}
	p := objs[len(objs)-1]
	if ks := e.Upsert(p); len(ks) == 0 {
		t.Fatal("re-upsert of a changed policy returned no keys")
	}
}
