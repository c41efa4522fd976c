package live

import (
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/inputs"
)

// fakeEngine is a tiny stand-in for compute.Engine: CRDs labeled
// gateway.networking.k8s.io/policy are policy kinds; a policy reaches the
// object named by spec.targetRef.name in its namespace (or, for
// spec.targetRef.kind GatewayClass, the cluster-scoped one), and the output
// lists the policies with their spec.value as message.
//
// It has no bulk mode and no memo, names no policy (so builds no reach),
// knows no sensitive field; traces and reviews are not asked of it (the
// embedded Engine is nil: they would panic).
type fakeEngine struct {
	Engine
	mu       sync.Mutex
	kinds    map[string]schema.GroupVersionResource // crd name -> resource
	policies map[string]fakePolicy                  // gk/ns/name
	seen     map[string]int                         // kind -> upserts
}

type fakePolicy struct {
	gk        schema.GroupKind
	namespace string
	name      string
	target    compute.Key
	value     string
}

func newFakeEngine() *fakeEngine {
	return &fakeEngine{kinds: map[string]schema.GroupVersionResource{}, policies: map[string]fakePolicy{}, seen: map[string]int{}}
}

func (e *fakeEngine) isPolicyGK(gk schema.GroupKind) bool {
	for crd := range e.kinds {
		if strings.HasSuffix(crd, "."+gk.Group) && e.kinds[crd].Group == gk.Group {
			return true
		}
	}
	return false
}

func polKey(gk schema.GroupKind, ns, name string) string { return gk.String() + "/" + ns + "/" + name }

func (e *fakeEngine) Upsert(obj *unstructured.Unstructured) []compute.Key {
	e.mu.Lock()
	defer e.mu.Unlock()
	gk := obj.GroupVersionKind().GroupKind()
	e.seen[gk.Kind]++
	if gk.Kind == "CustomResourceDefinition" {
		if _, ok := obj.GetLabels()["gateway.networking.k8s.io/policy"]; ok {
			group, _, _ := unstructured.NestedString(obj.Object, "spec", "group")
			plural, _, _ := unstructured.NestedString(obj.Object, "spec", "names", "plural")
			e.kinds[obj.GetName()] = schema.GroupVersionResource{Group: group, Version: inputs.ServedVersion(obj), Resource: plural}
		}
		return nil
	}
	if !e.isPolicyGK(gk) {
		return nil
	}
	k := polKey(gk, obj.GetNamespace(), obj.GetName())
	var keys []compute.Key
	if old, ok := e.policies[k]; ok {
		keys = append(keys, old.target)
	}
	name, _, _ := unstructured.NestedString(obj.Object, "spec", "targetRef", "name")
	kind, _, _ := unstructured.NestedString(obj.Object, "spec", "targetRef", "kind")
	value, _, _ := unstructured.NestedString(obj.Object, "spec", "value")
	p := fakePolicy{gk: gk, namespace: obj.GetNamespace(), name: obj.GetName(), value: value, target: compute.Key{Namespace: obj.GetNamespace(), Name: name}}
	if kind == "GatewayClass" {
		p.target.Namespace = ""
	}
	e.policies[k] = p
	return append(keys, p.target)
}

func (e *fakeEngine) Delete(gk schema.GroupKind, namespace, name string) []compute.Key {
	e.mu.Lock()
	defer e.mu.Unlock()
	if gk.Kind == "CustomResourceDefinition" {
		delete(e.kinds, name)
		return nil
	}
	k := polKey(gk, namespace, name)
	old, ok := e.policies[k]
	if !ok {
		return nil
	}
	delete(e.policies, k)
	return []compute.Key{old.target}
}

func (e *fakeEngine) PolicyResources() []schema.GroupVersionResource {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []schema.GroupVersionResource
	for _, r := range e.kinds {
		out = append(out, r)
	}
	return out
}

func (e *fakeEngine) Keys() []compute.Key {
	e.mu.Lock()
	defer e.mu.Unlock()
	set := map[compute.Key]bool{}
	for _, p := range e.policies {
		set[p.target] = true
	}
	var out []compute.Key
	for k := range set {
		out = append(out, k)
	}
	compute.SortKeys(out)
	return out
}

func (e *fakeEngine) Compute(key compute.Key) (runtime.Object, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var srcs []v1alpha1.PolicySource
	for _, p := range e.policies {
		if p.target == key {
			srcs = append(srcs, v1alpha1.PolicySource{Namespace: p.namespace, Name: p.name, Message: p.value, Outcome: v1alpha1.OutcomeEnforced})
		}
	}
	if len(srcs) == 0 {
		return nil, false
	}
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].Name < srcs[j].Name })
	targets := []v1alpha1.Target{{Kind: "HTTPRoute", Group: "gateway.networking.k8s.io", Name: key.Name, Policies: []v1alpha1.TargetPolicy{{
		Group: "example.com", Kind: "RetryPolicy", Class: v1alpha1.ClassInherited, Sources: srcs,
		Effective: []v1alpha1.EffectiveSpec{{Spec: runtime.RawExtension{Raw: []byte(`{ "retries" : 3 }`)}}},
	}}}}
	if key.Namespace == "" {
		o := &v1alpha1.ClusterEffectivePolicy{Targets: targets}
		o.Name = key.Name
		return o, true
	}
	o := &v1alpha1.EffectivePolicy{Targets: targets}
	o.Name, o.Namespace = key.Name, key.Namespace
	return o, true
}

func (e *fakeEngine) SetBulk(bool)                              {}
func (e *fakeEngine) DropMemo()                                 {}
func (e *fakeEngine) Policies(compute.Key) []compute.PolicyInfo { return nil }
func (e *fakeEngine) PolicyKeys() []compute.Key                 { return nil }
func (e *fakeEngine) TakeChangedPolicies() []compute.Key        { return nil }

func (e *fakeEngine) SensitiveKind(schema.GroupKind) (compute.SensitiveKind, bool) {
	return compute.SensitiveKind{}, false
}

func (e *fakeEngine) upserts(kind string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seen[kind]
}
