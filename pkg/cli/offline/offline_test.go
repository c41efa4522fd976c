package offline

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/manifests"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/reach"
)

const root = "../../.."

func read(t *testing.T, files ...string) []*unstructured.Unstructured {
	t.Helper()
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = filepath.Join(root, f)
	}
	objs, err := manifests.Read(manifests.Options{Filenames: paths})
	if err != nil {
		t.Fatal(err)
	}
	return manifests.Complete(objs, manifests.Scope{})
}

var manifestSets = map[string][]string{
	"demo":     {"hack/demo"},
	"example1": {"test/scenarios/crds", "test/scenarios/topology.yaml", "test/scenarios/gep713-example1-direct/policies.yaml"},
	"example2": {"test/scenarios/crds", "test/scenarios/topology.yaml", "test/scenarios/gep713-example2-defaults-overrides/policies.yaml"},
	"example3": {"test/scenarios/crds", "test/scenarios/topology.yaml", "test/scenarios/gep713-example3-merged-specs/policies.yaml"},
}

// TestSameAsTheEngine: the outputs are the engine's (compute.ComputeAll on
// the same objects), and every reach is exactly the outputs' source
// entries of its policy (docs/spec.md §8).
func TestSameAsTheEngine(t *testing.T) {
	for name, files := range manifestSets {
		t.Run(name, func(t *testing.T) {
			objs := read(t, files...)
			c, err := New(objs, compute.Options{})
			if err != nil {
				t.Fatal(err)
			}
			want, err := compute.ComputeAll(objs, compute.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := append(c.EffectivePolicies("", false), c.EffectivePolicies("", true)...)
			if len(got) != len(want) || len(got) == 0 {
				t.Fatalf("%d outputs, the engine computes %d", len(got), len(want))
			}
			entries := map[compute.Key]int{}
			for _, obj := range got {
				ns, name := keyOf(obj)
				k := compute.Key{Namespace: ns, Name: name}
				if !reflect.DeepEqual(obj, want[k]) {
					t.Errorf("%s differs from the engine's", k)
				}
				for _, e := range reach.FromOutput(obj) {
					entries[e.Policy]++
				}
			}
			reaches := append(c.PolicyReaches("", false), c.PolicyReaches("", true)...)
			if len(reaches) == 0 {
				t.Fatal("no reaches")
			}
			for _, obj := range reaches {
				ns, name := keyOf(obj)
				n := 0
				for _, p := range policiesOf(obj) {
					n += len(p.Reaches)
				}
				if k := (compute.Key{Namespace: ns, Name: name}); n != entries[k] {
					t.Errorf("the reach of %s lists %d targets, the outputs %d entries", k, n, entries[k])
				}
			}
		})
	}
}

func keyOf(obj any) (string, string) {
	switch o := obj.(type) {
	case *v1alpha1.EffectivePolicy:
		return o.Namespace, o.Name
	case *v1alpha1.ClusterEffectivePolicy:
		return "", o.Name
	case *v1alpha1.PolicyReach:
		return o.Namespace, o.Name
	case *v1alpha1.ClusterPolicyReach:
		return "", o.Name
	}
	return "", ""
}

func policiesOf(obj any) []v1alpha1.ReachPolicy {
	switch o := obj.(type) {
	case *v1alpha1.PolicyReach:
		return o.Policies
	case *v1alpha1.ClusterPolicyReach:
		return o.Policies
	}
	return nil
}

func TestLookups(t *testing.T) {
	c, err := New(read(t, manifestSets["demo"]...), compute.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.EffectivePolicy("baker", "nope"); ok {
		t.Error("an EffectivePolicy of nothing")
	}
	if _, ok := c.EffectivePolicy("", "baker"); !ok {
		t.Error("no ClusterEffectivePolicy of Namespace baker")
	}
	if _, ok := c.PolicyReach("baker", "nope"); ok {
		t.Error("a PolicyReach of no policy")
	}
	if got := len(c.EffectivePolicies("infra", false)); got != 1 {
		t.Errorf("%d EffectivePolicies in infra, want 1 (cupcakes)", got)
	}
	_, err = c.Trace(&v1alpha1.RequestTrace{Spec: v1alpha1.RequestTraceSpec{Gateway: &v1alpha1.GatewayReference{Namespace: "infra", Name: "nope"}, Request: v1alpha1.TracedRequest{Host: "a.example"}}})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.gateway: Not found: "infra/nope"`) {
		t.Errorf("a trace through a missing Gateway: %v, want Invalid on spec.gateway", err)
	}
	answer, err := c.Trace(&v1alpha1.RequestTrace{Spec: v1alpha1.RequestTraceSpec{Request: v1alpha1.TracedRequest{Host: "baker.cupcakes.example"}}})
	if err != nil {
		t.Fatalf("the trace of baker.cupcakes.example: %v", err)
	}
	if st := answer.Status; len(st.Matches) != 1 || st.Matches[0].Reason != "Matched" || len(st.Matches[0].Policies) != 2 {
		t.Errorf("the trace of baker.cupcakes.example: %+v", st)
	}
}

// TestReviewEqualsDiff: a review on the demo (the engine's WhatIf) and the
// diff of the demo with the demo changed by the same proposal compute the
// same outputs before and after for every key the review reports; the
// review leaves the cluster as it was.
func TestReviewEqualsDiff(t *testing.T) {
	before, err := New(read(t, manifestSets["demo"]...), compute.Options{})
	if err != nil {
		t.Fatal(err)
	}
	proposed := read(t, "hack/demo/proposed/retry-all-1.yaml")[1] // after the implicit Namespace
	served, _ := before.EffectivePolicy("baker", "baker")
	got, err := before.Review(t.Context(), compute.Proposal{Apply: []*unstructured.Unstructured{proposed}})
	if err != nil {
		t.Fatal(err)
	}
	if now, _ := before.EffectivePolicy("baker", "baker"); !reflect.DeepEqual(now, served) {
		t.Error("the review changed the cluster's answers")
	}

	old := read(t, manifestSets["demo"]...)
	var changed []*unstructured.Unstructured
	for _, o := range read(t, manifestSets["demo"]...) {
		if o.GetKind() == "RetryPolicy" && o.GetName() == "retry-all" {
			o = proposed.DeepCopy()
		}
		changed = append(changed, o)
	}
	after, err := New(manifests.CompleteAfter(changed, old, manifests.Scope{}), compute.Options{})
	if err != nil {
		t.Fatal(err)
	}
	diff := map[compute.Key]compute.Outcome{}
	for _, o := range Diff(before, after) {
		diff[o.Key] = o
	}
	modified := 0
	for _, o := range got {
		d, ok := diff[o.Key]
		if !ok || !reflect.DeepEqual(o.Before, d.Before) || !reflect.DeepEqual(o.After, d.After) {
			t.Errorf("%s: the review and the diff disagree", o.Key)
		}
		if !reflect.DeepEqual(o.Before, o.After) {
			modified++
		}
	}
	if modified != 3 { // Namespace baker, baker/baker, baker/frosting
		t.Errorf("%d outputs change, want 3", modified)
	}
	for k, d := range diff {
		if !reflect.DeepEqual(d.Before, d.After) && !containsKey(got, k) {
			t.Errorf("%s changes in the diff, not in the review", k)
		}
	}
}

func containsKey(outcomes []compute.Outcome, k compute.Key) bool {
	for _, o := range outcomes {
		if o.Key == k {
			return true
		}
	}
	return false
}

// TestReviewRefuses: what the engine cannot review is refused as the
// server refuses it.
func TestReviewRefuses(t *testing.T) {
	c, err := New(read(t, manifestSets["demo"]...), compute.Options{})
	if err != nil {
		t.Fatal(err)
	}
	crd := read(t, "hack/demo/00-crds.yaml")[0]
	if _, err := c.Review(t.Context(), compute.Proposal{Apply: []*unstructured.Unstructured{crd}}); !errors.Is(err, compute.ErrNotReviewable) {
		t.Errorf("a CRD: %v", err)
	}
}

// TestAssumedOffline: offline, as online, the demo's kinds (found by their CRDs' label) say
// their semantics were assumed in every answer: EffectivePolicies, PolicyReaches, traces; a
// descriptor of the kind (semantics GEP by default) makes it the descriptor's.
func TestAssumedOffline(t *testing.T) {
	retry, err := compute.LoadDescriptors([]byte(`
apiVersion: effectivepolicy.dev/v1alpha1
kind: PolicyDescriptorList
descriptors:
- {group: demo.effectivepolicy.dev, kind: RetryPolicy, class: Inherited, targetRef: [spec.targetRef], targetRefs: [spec.targetRefs],
   defaults: [spec.defaults], overrides: [spec.overrides], strategyField: strategy, strategyValues: {atomic: Atomic, patch: Patch}}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		opts  compute.Options
		retry string // RetryPolicy's semantics; TimeoutPolicy's stay Assumed
	}{
		{"by label", compute.Options{}, v1alpha1.SemanticsAssumed},
		{"described", compute.Options{Descriptors: retry}, "GEP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(read(t, manifestSets["demo"]...), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			want := func(kind string) string {
				if kind == "RetryPolicy" {
					return tc.retry
				}
				return v1alpha1.SemanticsAssumed
			}
			seen := map[string]int{}
			check := func(where, kind, got string) {
				seen[kind]++
				if got != want(kind) {
					t.Errorf("%s: %s semantics %q, want %q", where, kind, got, want(kind))
				}
			}
			for _, obj := range append(c.EffectivePolicies("", false), c.EffectivePolicies("", true)...) {
				ns, name := keyOf(obj)
				ts, err := encoded.TargetsOf(obj)
				if err != nil {
					t.Fatal(err)
				}
				for _, tg := range ts {
					for _, tp := range tg.Policies {
						check("EffectivePolicy "+ns+"/"+name, tp.Kind, tp.Semantics)
					}
				}
			}
			for _, obj := range append(c.PolicyReaches("", false), c.PolicyReaches("", true)...) {
				for _, p := range policiesOf(obj) {
					check("PolicyReach", p.Kind, p.Semantics)
				}
			}
			answer, err := c.Trace(&v1alpha1.RequestTrace{Spec: v1alpha1.RequestTraceSpec{Request: v1alpha1.TracedRequest{Host: "baker.cupcakes.example"}}})
			if err != nil || len(answer.Status.Matches) == 0 {
				t.Fatalf("trace: %v", err)
			}
			for _, p := range answer.Status.Matches[0].Policies {
				check("trace", p.Kind, p.Semantics)
			}
			if seen["RetryPolicy"] == 0 || seen["TimeoutPolicy"] == 0 {
				t.Errorf("entries seen: %v", seen)
			}
		})
	}
}
