package compute

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// The kinds incrementalMutations edit and delete.
var (
	gatewayGK                  = schema.GroupKind{Group: topology.GatewayGroup, Kind: "Gateway"}
	httpRouteGK                = schema.GroupKind{Group: topology.GatewayGroup, Kind: "HTTPRoute"}
	retryPolicyGK              = schema.GroupKind{Group: "example.com", Kind: "RetryPolicy"}
	timeoutPolicyGK            = schema.GroupKind{Group: "example.com", Kind: "TimeoutPolicy"}
	serviceGK                  = schema.GroupKind{Kind: "Service"}
	namespaceGK                = schema.GroupKind{Kind: "Namespace"}
	customResourceDefinitionGK = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
)

// objGetter returns a copy of the object of kind gk named ns/name that the engine was fed.
type objGetter func(gk schema.GroupKind, ns, name string) *unstructured.Unstructured

// incrementalMutations are TestIncremental's mutations of every kind, in order, made from copies
// of the objects get returns.
func incrementalMutations(get objGetter) []mutation {
	var muts []mutation
	muts = append(muts, policyAndTopologyMutations(get)...)
	muts = append(muts, referenceMutations(get)...)
	muts = append(muts, specHostnameAndGrantMutations(get)...)
	muts = append(muts, meshRouteMutations(get)...)
	muts = append(muts, policyKindMutations(get)...)
	return muts
}

// policyAndTopologyMutations edit, retarget, delete and add policies, and move, edit, delete and
// re-add the Gateways, routes, Namespaces and Services they reach.
func policyAndTopologyMutations(get objGetter) []mutation {
	var muts []mutation
	{ // edit a gateway policy's value
		p := get(retryPolicyGK, "ns-1", "pol-1")
		_ = unstructured.SetNestedField(p.Object, int64(99), "spec", "attempts")
		muts = append(muts, mutation{name: "edit gateway policy", upsert: []*unstructured.Unstructured{p}})
	}
	{ // retarget a route policy to another route
		p := get(retryPolicyGK, "ns-0", "pol-3")
		_ = unstructured.SetNestedSlice(p.Object, []interface{}{ref(topology.GatewayGroup, "HTTPRoute", "route-5")}, "spec", "targetRefs")
		muts = append(muts, mutation{name: "retarget policy", upsert: []*unstructured.Unstructured{p}})
	}
	muts = append(muts, mutation{name: "delete namespace policy", del: []objKey{{retryPolicyGK, "ns-0", "pol-0"}}})
	{ // new policy on a listener
		p := u("example.com/v1", "RetryPolicy", "ns-0", "late", map[string]interface{}{
			"targetRefs": []interface{}{map[string]interface{}{"group": topology.GatewayGroup, "kind": "Gateway", "name": "gw-0", "sectionName": "http"}},
			"overrides":  map[string]interface{}{"attempts": int64(1)},
		})
		p.SetCreationTimestamp(metav1NewTime(baseTime.Add(1e6)))
		muts = append(muts, mutation{name: "add listener policy", upsert: []*unstructured.Unstructured{p}})
	}
	{ // move a route to another gateway
		r := get(httpRouteGK, "ns-0", "route-1")
		_ = unstructured.SetNestedSlice(r.Object, []interface{}{map[string]interface{}{"name": "gw-1"}}, "spec", "parentRefs")
		muts = append(muts, mutation{name: "move route", upsert: []*unstructured.Unstructured{r}})
	}
	{ // change a route's backends
		r := get(httpRouteGK, "ns-1", "route-9")
		_ = unstructured.SetNestedSlice(r.Object, []interface{}{map[string]interface{}{"name": "main", "backendRefs": []interface{}{map[string]interface{}{"name": "svc-2"}}}}, "spec", "rules")
		muts = append(muts, mutation{name: "route backends", upsert: []*unstructured.Unstructured{r}})
	}
	muts = append(muts, mutation{name: "delete gateway", del: []objKey{{gatewayGK, "ns-1", "gw-0"}}})
	muts = append(muts, mutation{name: "re-add gateway", upsert: []*unstructured.Unstructured{get(gatewayGK, "ns-1", "gw-0")}})
	{ // gateway https listener admits only labeled namespaces
		g := get(gatewayGK, "ns-0", "gw-1")
		ls, _, _ := unstructured.NestedSlice(g.Object, "spec", "listeners")
		ls[1].(map[string]interface{})["allowedRoutes"] = map[string]interface{}{"namespaces": map[string]interface{}{"from": "Selector", "selector": map[string]interface{}{"matchLabels": map[string]interface{}{"idx": "0"}}}}
		_ = unstructured.SetNestedSlice(g.Object, ls, "spec", "listeners")
		muts = append(muts, mutation{name: "listener selector", upsert: []*unstructured.Unstructured{g}})
	}
	{ // namespace labels change
		n := get(namespaceGK, "", "ns-0")
		n.SetLabels(map[string]string{"idx": "9"})
		muts = append(muts, mutation{name: "namespace labels", upsert: []*unstructured.Unstructured{n}})
	}
	muts = append(muts, mutation{name: "delete service", del: []objKey{{serviceGK, "ns-0", "svc-0"}}})
	muts = append(muts, mutation{name: "re-add service", upsert: []*unstructured.Unstructured{get(serviceGK, "ns-0", "svc-0")}})
	{ // direct policy: new established one loses to the older
		p := get(timeoutPolicyGK, "ns-0", "pol-6")
		p.SetName("pol-6-copy")
		p.SetCreationTimestamp(metav1NewTime(baseTime.Add(2e6)))
		muts = append(muts, mutation{name: "conflicting direct", upsert: []*unstructured.Unstructured{p}})
	}
	return muts
}

// referenceMutations add policies whose targets need something else first: a ReferenceGrant, the
// target itself, or labels their selector matches.
func referenceMutations(get objGetter) []mutation {
	var muts []mutation
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
		r := get(httpRouteGK, "ns-2", "route-17")
		r.SetLabels(map[string]string{"pick": "me"})
		muts = append(muts, mutation{name: "label route", upsert: []*unstructured.Unstructured{r}})
	}
	return muts
}

// specHostnameAndGrantMutations edit only policies' specs (contexts stay cached), listener and
// route hostnames, and the ReferenceGrant to the shared Services.
func specHostnameAndGrantMutations(get objGetter) []mutation {
	var muts []mutation
	{ // spec-only edits (contexts stay cached): route, namespace, direct, rule
		for _, pk := range []struct {
			gk       schema.GroupKind
			ns, name string
		}{{retryPolicyGK, "ns-1", "pol-4"}, {retryPolicyGK, "ns-1", "pol-16"}, {timeoutPolicyGK, "ns-2", "pol-14"}, {retryPolicyGK, "ns-2", "pol-5"}, {retryPolicyGK, "ns-1", "pol-1"}} {
			p := get(pk.gk, pk.ns, pk.name)
			_ = unstructured.SetNestedField(p.Object, map[string]interface{}{"changed": pk.name}, "spec", "extra")
			muts = append(muts, mutation{name: "spec edit " + pk.name, upsert: []*unstructured.Unstructured{p}})
		}
		p := get(retryPolicyGK, "ns-1", "pol-1")
		p.SetCreationTimestamp(metav1NewTime(baseTime.Add(-1e9)))
		muts = append(muts, mutation{name: "older timestamp", upsert: []*unstructured.Unstructured{p}})
	}
	{ // hostnames: a listener gets one, then a route's hostnames stop intersecting it
		g := get(gatewayGK, "ns-2", "gw-0")
		ls, _, _ := unstructured.NestedSlice(g.Object, "spec", "listeners")
		ls[0].(map[string]interface{})["hostname"] = "*.example.com"
		_ = unstructured.SetNestedSlice(g.Object, ls, "spec", "listeners")
		muts = append(muts, mutation{name: "listener hostname", upsert: []*unstructured.Unstructured{g}})
		r := get(httpRouteGK, "ns-2", "route-16")
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
	return muts
}

// meshRouteMutations move a mesh route and its Service's ports about.
func meshRouteMutations(get objGetter) []mutation {
	var muts []mutation
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
		svc := get(serviceGK, "ns-1", "svc-0")
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
		muts = append(muts, mutation{name: "delete the mesh Service", del: []objKey{{serviceGK, "ns-1", "svc-1"}}})
		muts = append(muts, mutation{name: "re-add the mesh Service", upsert: []*unstructured.Unstructured{get(serviceGK, "ns-1", "svc-1")}})
	}
	return muts
}

// schemaPolicyCRD is an unlabeled CRD whose schema makes its kind a policy.
const schemaPolicyCRD = `apiVersion: apiextensions.k8s.io/v1
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
`

// policyKindMutations make a kind a policy by its schema and then refuse it by the label, delete
// a policy kind's CRD, and re-upsert an object unchanged.
func policyKindMutations(get objGetter) []mutation {
	var muts []mutation
	{ // a policy kind found by its schema, then refused by the label
		crd := parseDocsNoT(schemaPolicyCRD)[0]
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
	muts = append(muts, mutation{name: "delete direct CRD", del: []objKey{{customResourceDefinitionGK, "", "timeoutpolicies.example.com"}}})
	muts = append(muts, mutation{name: "no-op re-upsert", upsert: []*unstructured.Unstructured{get(httpRouteGK, "ns-0", "route-0")}})
	return muts
}
