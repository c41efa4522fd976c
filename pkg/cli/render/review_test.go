package render

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// TestMatchPairs: items matched by key, in after's order, what goes away
// where it stood.
func TestMatchPairs(t *testing.T) {
	cases := []struct {
		before, after string
		want          string
	}{
		{"abc", "abc", "aa bb cc"},
		{"abc", "ac", "aa b- cc"},
		{"ac", "abc", "aa +b cc"},
		{"abc", "", "a- b- c-"},
		{"", "ab", "+a +b"},
		{"abc", "cba", "cc bb aa"},
		{"aab", "ab", "aa a- bb"}, // a key twice: matched one to one
		{"xa", "ya", "x- +y aa"},
		{"xab", "ayb", "x- aa +y bb"},
		{"axb", "ayb", "aa x- +y bb"},
	}
	for _, c := range cases {
		key := func(r rune) string { return string(r) }
		var got []string
		for _, p := range matchPairs([]rune(c.before), []rune(c.after), key) {
			s := ""
			for _, side := range []*rune{p.before, p.after} {
				if side == nil {
					s += map[bool]string{true: "+", false: "-"}[p.before == nil]
				} else {
					s += string(*side)
				}
			}
			got = append(got, s)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%q -> %q: %q, want %q", c.before, c.after, strings.Join(got, " "), c.want)
		}
	}
}

// TestReview: what the demo's diffs do not show — hidden changes, a class
// that changes, entries of a section, a spec that is not an object, an
// entry of the same context listed twice, a change in order alone.
func TestReview(t *testing.T) {
	gw := ref("Gateway", "infra", "gw")
	entry := func(section, spec string, sources map[string]string) v1alpha1.EffectiveSpec {
		return v1alpha1.EffectiveSpec{Via: []v1alpha1.ObjectReference{gw}, SectionName: section, Spec: runtime.RawExtension{Raw: []byte(spec)}, FieldSources: sources}
	}
	kind := func(class v1alpha1.PolicyClass, effective ...v1alpha1.EffectiveSpec) v1alpha1.TargetPolicy {
		return v1alpha1.TargetPolicy{Group: "example.com", Kind: "TLSPolicy", Class: class, Effective: effective}
	}
	target := func(policies ...v1alpha1.TargetPolicy) []v1alpha1.Target {
		return []v1alpha1.Target{{Group: "gateway.networking.k8s.io", Kind: "Gateway", Name: "gw", Policies: policies}}
	}
	a := entry("https", `{"mode":"strict","ciphers":["a"]}`, map[string]string{"/mode": "infra/tls", "/ciphers": "infra/tls"})
	b := entry("https", `{"mode":"lax","ciphers":["a"]}`, map[string]string{"/mode": "infra/tls", "/ciphers": "infra/tls"})
	c := entry("http", `{"mode":"lax"}`, map[string]string{"/mode": "infra/tls"})
	scalar := entry("", `"on"`, map[string]string{"": "infra/switch"})
	s := v1alpha1.EffectivePolicyReviewStatus{
		Changes: []v1alpha1.EffectivePolicyChange{
			{Resource: "effectivepolicies", Namespace: "infra", Name: "gw", Change: v1alpha1.ChangeModified,
				Before: v1alpha1.ReviewTargets{Targets: target(kind(v1alpha1.ClassDirect, a, scalar))},
				After:  v1alpha1.ReviewTargets{Targets: target(kind(v1alpha1.ClassInherited, b))}},
			{Resource: "effectivepolicies", Namespace: "infra", Name: "same", Change: v1alpha1.ChangeModified,
				Before: v1alpha1.ReviewTargets{Targets: target(kind(v1alpha1.ClassDirect, a, c))},
				After:  v1alpha1.ReviewTargets{Targets: target(kind(v1alpha1.ClassDirect, c, a))}},
		},
		HiddenChanges: 2,
	}
	var got strings.Builder
	for _, n := range Review(s) {
		got.WriteString(draw(t, n))
	}
	want := `EffectivePolicy infra/gw  Modified
└── Gateway infra/gw
    └── TLSPolicy.example.com  Direct -> Inherited
        ├── section https, via Gateway infra/gw
        │   └── mode: strict -> lax  ← infra/tls
        └── - via Gateway infra/gw
            └── - spec: on  ← infra/switch
EffectivePolicy infra/same  Modified
└── Gateway infra/gw
    └── TLSPolicy.example.com  Direct
        └── reordered, otherwise the same
2 more changes in namespaces where you may not get effectivepolicies
`
	if got.String() != want {
		t.Errorf("got\n%s\nwant\n%s", got.String(), want)
	}
}

// A kind whose policies all apply is compared policy by policy: one added first shows as added,
// the ones after it as moved a step, a changed spec as changed.
func TestReviewOrdered(t *testing.T) {
	gw := ref("Gateway", "infra", "gw")
	entry := func(spec string, sources map[string]string) v1alpha1.TargetPolicy {
		return v1alpha1.TargetPolicy{Group: "gateway.envoyproxy.io", Kind: "EnvoyPatchPolicy", Class: v1alpha1.ClassInherited,
			Effective: []v1alpha1.EffectiveSpec{{Via: []v1alpha1.ObjectReference{gw}, Spec: runtime.RawExtension{Raw: []byte(spec)}, FieldSources: sources}}}
	}
	target := func(tp v1alpha1.TargetPolicy) []v1alpha1.Target {
		return []v1alpha1.Target{{Group: "gateway.networking.k8s.io", Kind: "Gateway", Name: "gw", Policies: []v1alpha1.TargetPolicy{tp}}}
	}
	before := entry(`[{"priority":1},{"priority":2}]`, map[string]string{"/0": "infra/a", "/1": "infra/b"})
	after := entry(`[{"priority":-1},{"priority":1},{"priority":3}]`, map[string]string{"/0": "infra/new", "/1": "infra/a", "/2": "infra/b"})
	s := v1alpha1.EffectivePolicyReviewStatus{Changes: []v1alpha1.EffectivePolicyChange{
		{Resource: "effectivepolicies", Namespace: "infra", Name: "gw", Change: v1alpha1.ChangeModified,
			Before: v1alpha1.ReviewTargets{Targets: target(before)}, After: v1alpha1.ReviewTargets{Targets: target(after)}},
	}}
	var got strings.Builder
	for _, n := range Review(s) {
		got.WriteString(draw(t, n))
	}
	for _, want := range []string{
		"infra/a\n", "step: 1 -> 2",
		"infra/b\n", "step: 2 -> 3", `spec: {"priority":2} -> {"priority":3}`,
		"infra/new\n", "+ step: 1", `+ spec: {"priority":-1}`,
	} {
		if !strings.Contains(got.String(), want) {
			t.Errorf("review lacks %q:\n%s", want, got.String())
		}
	}
}
