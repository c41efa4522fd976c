package scale

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestGenerateCountsAndDeterminism(t *testing.T) {
	o := Options{Scale: 0.01, Seed: 1}
	objs := Generate(o)
	checkGeneratedCounts(t, objs)

	// Two parentRefs of a route never name the same Gateway (the Gateway
	// API rejects that without distinct sectionNames), at any size.
	checkParentRefsNameDistinctGateways(t)

	// Listener hostnames: the routes' domain but for one listener taking any
	// hostname and one an internal domain.
	checkListenerHostnames(t, objs)

	// Same options, same bytes; another seed, other choices.
	checkDeterminism(t, o)

	// Every kind has a resource, and the large size resolves to scale 1.
	checkResourcesAndDefaultSizes(t)
}

// checkGeneratedCounts checks the objects, and the parts of them, generated
// at scale 0.01.
func checkGeneratedCounts(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	c := Count(objs)
	want := map[string]int{
		"CustomResourceDefinition": 3,
		"Namespace":                1 + 10 + 1,
		"GatewayClass":             1,
		"Gateway":                  1,
		"listeners":                8,
		"HTTPRoute":                200 + 20,
		"meshRoutes":               20,
		"rules":                    600 + 20,
		"Service":                  200 + 2,
		"ports":                    400 + 2,
		"ReferenceGrant":           8, // 10 app namespaces, every fifth without
		"crossNamespaceBackends":   20,
		"policies":                 50,
		"policies/GatewayClass":    3,
	}
	for k, v := range want {
		if c[k] != v {
			t.Errorf("%s: got %d, want %d", k, c[k], v)
		}
	}
	if c["parentRefs"] < c["HTTPRoute"] || c["parentRefs"] > 2*c["HTTPRoute"]-c["meshRoutes"] {
		t.Errorf("parentRefs: %d for %d routes", c["parentRefs"], c["HTTPRoute"])
	}
	for _, l := range []string{LevelGatewayClass, LevelNamespace, LevelGateway, LevelListener, LevelRoute, LevelRule, LevelService, LevelPort} {
		if c["policies/"+l] == 0 {
			t.Errorf("no policy at level %s", l)
		}
	}
	for _, k := range PolicyKinds {
		if c[k.Kind] == 0 {
			t.Errorf("no %s", k.Kind)
		}
	}
	if got := len(objs); got != 3+12+1+1+202+8+220+50 {
		t.Errorf("%d objects", got)
	}
}

func checkParentRefsNameDistinctGateways(t *testing.T) {
	t.Helper()
	for _, sc := range []float64{0.01, 0.02, 0.03} {
		for _, u := range Generate(Options{Scale: sc, Seed: 1}) {
			if u.GetKind() != "HTTPRoute" {
				continue
			}
			prs, _, _ := unstructured.NestedSlice(u.Object, "spec", "parentRefs")
			seen := map[string]bool{}
			for _, pr := range prs {
				m := pr.(map[string]interface{})
				if m["kind"] == "Service" {
					continue // mesh routes have one parent
				}
				k := m["namespace"].(string) + "/" + m["name"].(string)
				if seen[k] {
					t.Errorf("scale %v: %s names Gateway %s twice", sc, u.GetName(), k)
				}
				seen[k] = true
			}
		}
	}
}

func checkListenerHostnames(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	hosts := map[string]int{}
	for _, u := range objs {
		if u.GetKind() == "Gateway" {
			ls, _, _ := unstructured.NestedSlice(u.Object, "spec", "listeners")
			for _, l := range ls {
				h, _ := l.(map[string]interface{})["hostname"].(string)
				hosts[h]++
			}
		}
	}
	if want := map[string]int{"*.bench.example": 6, "": 1, "*.internal.bench.example": 1}; !reflect.DeepEqual(hosts, want) {
		t.Errorf("listener hostnames %v, want %v", hosts, want)
	}
}

func checkDeterminism(t *testing.T, o Options) {
	t.Helper()
	render := func(o Options) []byte {
		b, err := json.Marshal(Generate(o))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if a, b := render(o), render(o); !reflect.DeepEqual(a, b) {
		t.Error("two runs with the same options differ")
	}
	if reflect.DeepEqual(render(o), render(Options{Scale: 0.01, Seed: 2})) {
		t.Error("seeds 1 and 2 gave the same topology")
	}
}

func checkResourcesAndDefaultSizes(t *testing.T) {
	t.Helper()
	for _, u := range Generate(Options{Scale: 0.001, GatewayAPICRDs: true}) {
		if Resource(u).Resource == "" {
			t.Errorf("no resource for %s", u.GroupVersionKind())
		}
	}
	if s := (Options{}).Sizes(); s != Large || s.Routes != 20000 || s.Policies != 5000 {
		t.Errorf("default sizes %+v", s)
	}
}
