package encoded

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

var update = flag.Bool("update", false, "write testdata/cache-format-<CacheFormat>-*.golden from the current encoder")

// goldenInputs are the fixed objects whose cache form is committed under
// testdata/: a namespaced output with every field of the API types set
// (escapes, a nil and a set via, field sources, a message), a
// cluster-scoped one without targets, and a PolicyReach and
// ClusterPolicyReach alike. Never change them: add new ones.
func goldenInputs() map[string]runtime.Object {
	meta := metav1.ObjectMeta{
		Name: "web", Namespace: "shop", ResourceVersion: "1099511627781",
		UID:               "0b6ed3c4-3e04-5b4c-9a7e-2b1c5d7e8f90",
		CreationTimestamp: metav1.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC),
		Labels:            map[string]string{"app": "web"},
	}
	ep := &v1alpha1.EffectivePolicy{ObjectMeta: meta, Targets: []v1alpha1.Target{
		{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Name: "web", Policies: []v1alpha1.TargetPolicy{{
			Group: "example.com", Kind: "RetryPolicy", Class: v1alpha1.ClassInherited,
			Sources: []v1alpha1.PolicySource{
				{Namespace: "shop", Name: "retries", AttachedTo: v1alpha1.ObjectReference{Group: "gateway.networking.k8s.io", Kind: "Gateway", Name: "gw", Namespace: "shop", SectionName: "https"},
					Stanza: v1alpha1.StanzaDefaults, MergeStrategy: v1alpha1.MergePatchDefaults, Outcome: v1alpha1.OutcomeEnforced},
				{Namespace: "", Name: "global", AttachedTo: v1alpha1.ObjectReference{Kind: "Namespace", Name: "shop"},
					Stanza: v1alpha1.StanzaOverrides, MergeStrategy: v1alpha1.MergeAtomicOverrides, Outcome: v1alpha1.OutcomeOverridden,
					Message: "beaten by <shop/retries> & \"others\", ünïcödé"},
			},
			Effective: []v1alpha1.EffectiveSpec{
				{Via: nil, Spec: runtime.RawExtension{Raw: []byte(`{"attempts":3}`)}, FieldSources: map[string]string{"/attempts": "shop/retries"}},
				{Via: []v1alpha1.ObjectReference{{Kind: "Namespace", Name: "shop"}, {Group: "gateway.networking.k8s.io", Kind: "Gateway", Name: "gw", SectionName: "https"}},
					SectionName: "rule-1", Spec: runtime.RawExtension{Raw: []byte(`{"attempts": 5, "html": "<b>"}`)},
					FieldSources: map[string]string{"/attempts": "global", "/html": "global"}},
			},
		}}},
		{Kind: "Service", Name: "web"},
	}}
	cluster := &v1alpha1.ClusterEffectivePolicy{ObjectMeta: metav1.ObjectMeta{
		Name: "gc", ResourceVersion: "1099511627777", UID: "5c1a7a53-0d0d-5e5e-8f8f-000000000001",
		CreationTimestamp: metav1.Date(2026, 3, 4, 5, 6, 8, 0, time.UTC),
	}}
	reach := &v1alpha1.PolicyReach{ObjectMeta: metav1.ObjectMeta{
		Name: "retries", Namespace: "shop", ResourceVersion: "1099511627790",
		UID:               "5c1a7a53-0d0d-5e5e-8f8f-000000000002",
		CreationTimestamp: metav1.Date(2026, 3, 4, 5, 6, 9, 0, time.UTC),
	}, Policies: []v1alpha1.ReachPolicy{{
		Group: "example.com", Kind: "RetryPolicy", Class: v1alpha1.ClassInherited,
		AttachedTo: []v1alpha1.AttachedTarget{
			{Target: v1alpha1.ObjectReference{Group: "gateway.networking.k8s.io", Kind: "Gateway", Name: "gw", Namespace: "shop", SectionName: "https"}, Resolved: true},
			{Target: v1alpha1.ObjectReference{Group: "gateway.networking.k8s.io", Kind: "Gateway", Name: "gone", Namespace: "shop"},
				Reason: v1alpha1.ReasonTargetNotFound, Message: "no such <Gateway>"},
		},
		Summary: v1alpha1.ReachSummary{Targets: 1, Enforced: 1},
		Reaches: []v1alpha1.Reach{{
			Target:     v1alpha1.ObjectReference{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Name: "web", Namespace: "shop"},
			AttachedTo: v1alpha1.ObjectReference{Group: "gateway.networking.k8s.io", Kind: "Gateway", Name: "gw", Namespace: "shop", SectionName: "https"},
			Stanza:     v1alpha1.StanzaDefaults, Outcome: v1alpha1.OutcomeEnforced,
		}},
	}}}
	clusterReach := &v1alpha1.ClusterPolicyReach{ObjectMeta: metav1.ObjectMeta{
		Name: "global", ResourceVersion: "1099511627791", UID: "5c1a7a53-0d0d-5e5e-8f8f-000000000003",
		CreationTimestamp: metav1.Date(2026, 3, 4, 5, 6, 10, 0, time.UTC),
	}}
	out := map[string]runtime.Object{"effectivepolicy": ep, "clustereffectivepolicy": cluster, "policyreach": reach, "clusterpolicyreach": clusterReach}
	for name, obj := range assumedGoldenInputs(ep, reach) {
		out[name] = obj
	}
	return out
}

// assumedGoldenInputs are the output and the reach of goldenInputs with the
// semantics field set: an assumed kind beside a described one.
func assumedGoldenInputs(ep *v1alpha1.EffectivePolicy, reach *v1alpha1.PolicyReach) map[string]runtime.Object {
	epa := ep.DeepCopy()
	epa.Name = "web-assumed"
	tp := &epa.Targets[0].Policies[0]
	tp.Semantics = v1alpha1.SemanticsAssumed
	described := *tp.DeepCopy()
	described.Group, described.Kind, described.Semantics = "gateway.envoyproxy.io", "BackendTrafficPolicy", "EnvoyGateway"
	described.Effective = described.Effective[:1] // the other's raw spec is not compact JSON
	epa.Targets[0].Policies = append(epa.Targets[0].Policies, described)
	ra := reach.DeepCopy()
	ra.Name = "retries-assumed"
	ra.Policies[0].Semantics = v1alpha1.SemanticsAssumed
	return map[string]runtime.Object{"effectivepolicy-assumed": epa, "policyreach-assumed": ra}
}

// TestCacheFormatGolden pins the cache form: a fixed input must encode to
// exactly the committed bytes of the current CacheFormat, and those bytes
// must decode back to it. A change of the form without a new CacheFormat
// fails here; so does a dependency whose output changes (S2 block encoding
// is expected to be stable: the store compares compressed targets as bytes,
// and a restart would otherwise report every output MODIFIED). After a
// deliberate change: bump CacheFormat, then
// go test ./pkg/encoded -run TestCacheFormatGolden -update.
func TestCacheFormatGolden(t *testing.T) {
	for name, in := range goldenInputs() {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", "cache-format-"+CacheFormat+"-"+name+".golden")
			o := mustNew(t, in)
			got, err := o.CacheBytes()
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v: a new CacheFormat needs its golden files (run with -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("the cache form changed, but CacheFormat is still %q: bump it (older files must be rebuilt, not misread), then run with -update\n got %q\nwant %q", CacheFormat, got, want)
			}
			back, err := FromCacheBytes(want)
			if err != nil {
				t.Fatalf("the golden bytes do not decode: %v", err)
			}
			if !Equal(back, o) {
				t.Errorf("decoded %+v, want %+v", back, o)
			}
			again, err := back.CacheBytes()
			if err != nil || !bytes.Equal(again, want) {
				t.Errorf("re-encoded differently (%v):\n got %q\nwant %q", err, again, want)
			}
			dec, err := back.Decode()
			if err != nil {
				t.Fatal(err)
			}
			// The decoded object is the input with its kind set and its raw
			// specs as json.Marshal writes them (compact, HTML-safe).
			wantDec := in.DeepCopyObject()
			wantDec.GetObjectKind().SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(o.Kind.String()))
			if ep, ok := wantDec.(*v1alpha1.EffectivePolicy); ok {
				ep.Targets[0].Policies[0].Effective[1].Spec.Raw = []byte(`{"attempts":5,"html":"\u003cb\u003e"}`)
			}
			if !apiequality.Semantic.DeepEqual(dec, wantDec) {
				t.Errorf("decoded object:\n got %+v\nwant %+v", dec, wantDec)
			}
		})
	}
}
