package kinds

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/yamldocs"
)

const crds = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: colorpolicies.colors.example.com}
spec:
  group: colors.example.com
  scope: Namespaced
  names: {kind: ColorPolicy, plural: colorpolicies, singular: colorpolicy, shortNames: [cp]}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: colorpolicies.direct.colors.example.com}
spec:
  group: direct.colors.example.com
  scope: Cluster
  names: {kind: ColorPolicy, plural: colorpolicies, singular: colorpolicy}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: not-a-crd}
`

func table(t *testing.T) *Table {
	t.Helper()
	objs, err := yamldocs.Parse([]byte(crds))
	if err != nil {
		t.Fatal(err)
	}
	tb := NewTable()
	if err := tb.AddCRDs(objs); err != nil {
		t.Fatal(err)
	}
	return tb
}

// names lists the kinds as Kind.group/scope.
func names(ks []Kind) []string {
	var out []string
	for _, k := range ks {
		s := k.String()
		if !k.Namespaced {
			s += "/cluster"
		}
		out = append(out, s)
	}
	return out
}

func TestTableResolve(t *testing.T) {
	tb := table(t)
	cases := []struct {
		arg  string
		want []string
	}{
		{"HTTPRoute", []string{"HTTPRoute.gateway.networking.k8s.io"}},
		{"httproute", []string{"HTTPRoute.gateway.networking.k8s.io"}},
		{"httproutes", []string{"HTTPRoute.gateway.networking.k8s.io"}},
		{"httproutes.gateway.networking.k8s.io", []string{"HTTPRoute.gateway.networking.k8s.io"}},
		{"svc", []string{"Service"}},
		{"ns", []string{"Namespace/cluster"}},
		{"namespace", []string{"Namespace/cluster"}},
		{"gatewayclass", []string{"GatewayClass.gateway.networking.k8s.io/cluster"}},
		{"lset", []string{"ListenerSet.gateway.networking.k8s.io", "XListenerSet.gateway.networking.x-k8s.io"}},
		{"cp", []string{"ColorPolicy.colors.example.com"}},
		{"colorpolicy", []string{"ColorPolicy.direct.colors.example.com/cluster", "ColorPolicy.colors.example.com"}},
		{"colorpolicies.colors.example.com", []string{"ColorPolicy.colors.example.com"}},
		{"ColorPolicy.direct.colors.example.com", []string{"ColorPolicy.direct.colors.example.com/cluster"}},
		{"nope", nil},
		{"httproute.example.com", nil},
	}
	for _, c := range cases {
		ks, err := tb.Resolve(c.arg)
		if got := names(ks); !slices.Equal(got, c.want) || (err == nil) != (c.want != nil) {
			t.Errorf("Resolve(%q) = %v, %v; want %v", c.arg, got, err, c.want)
		}
	}
}

func TestTableNamespaced(t *testing.T) {
	tb := table(t)
	for _, c := range []struct {
		gk             schema.GroupKind
		namespaced, ok bool
	}{
		{schema.GroupKind{Group: "direct.colors.example.com", Kind: "ColorPolicy"}, false, true},
		{schema.GroupKind{Group: "colors.example.com", Kind: "ColorPolicy"}, true, true},
		{schema.GroupKind{Kind: "Namespace"}, false, true},
		{schema.GroupKind{Kind: "ConfigMap"}, false, false},
	} {
		if ns, ok := tb.Namespaced(c.gk); ns != c.namespaced || ok != c.ok {
			t.Errorf("Namespaced(%v) = %v, %v; want %v, %v", c.gk, ns, ok, c.namespaced, c.ok)
		}
	}
}

func TestAddCRDsRefusesMalformed(t *testing.T) {
	bad := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "x"}, "spec": map[string]any{"names": "not an object"},
	}}
	if err := NewTable().AddCRDs([]*unstructured.Unstructured{bad}); err == nil {
		t.Error("a malformed CRD was accepted")
	}
}

func TestMapper(t *testing.T) {
	rm := meta.NewDefaultRESTMapper(nil)
	rm.Add(schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"}, meta.RESTScopeNamespace)
	rm.Add(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "ClusterRetryPolicy"}, meta.RESTScopeRoot)
	m := Mapper{Mapper: rm, Fallback: NewTable()}
	cases := []struct {
		arg  string
		want []string
	}{
		{"httproute", []string{"HTTPRoute.gateway.networking.k8s.io"}},
		{"httproutes.v1.gateway.networking.k8s.io", []string{"HTTPRoute.gateway.networking.k8s.io"}},
		{"clusterretrypolicies", []string{"ClusterRetryPolicy.example.com/cluster"}},
		// Not served: the fallback knows it.
		{"gatewayclass", []string{"GatewayClass.gateway.networking.k8s.io/cluster"}},
		{"nope", nil},
	}
	for _, c := range cases {
		ks, err := m.Resolve(c.arg)
		if got := names(ks); !slices.Equal(got, c.want) || (err == nil) != (c.want != nil) {
			t.Errorf("Resolve(%q) = %v, %v; want %v", c.arg, got, err, c.want)
		}
	}
}

// TestMapperNamespaced: the scope of a kind is the cluster's, else the
// fallback's, else unknown.
func TestMapperNamespaced(t *testing.T) {
	// A cluster's (discovery) mapper finds a kind in any version; this
	// one in the versions it is given.
	rm := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Group: "example.com", Version: "v1"}})
	rm.Add(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "ClusterRetryPolicy"}, meta.RESTScopeRoot)
	rm.Add(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "RetryPolicy"}, meta.RESTScopeNamespace)
	m := Mapper{Mapper: rm, Fallback: NewTable()}
	cases := []struct {
		gk             schema.GroupKind
		namespaced, ok bool
	}{
		{schema.GroupKind{Group: "example.com", Kind: "ClusterRetryPolicy"}, false, true},
		{schema.GroupKind{Group: "example.com", Kind: "RetryPolicy"}, true, true},
		{schema.GroupKind{Group: "gateway.networking.k8s.io", Kind: "Gateway"}, true, true}, // the fallback's
		{schema.GroupKind{Kind: "Namespace"}, false, true},
		{schema.GroupKind{Group: "example.com", Kind: "Nope"}, false, false},
	}
	for _, c := range cases {
		if ns, ok := m.Namespaced(c.gk); ns != c.namespaced || ok != c.ok {
			t.Errorf("Namespaced(%v) = %v, %v; want %v, %v", c.gk, ns, ok, c.namespaced, c.ok)
		}
	}
}
