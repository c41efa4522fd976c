package fold

// Assembling an output object (docs/spec.md §2): per target the policies
// of every kind, in the order docs/spec.md §2 says.

import (
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/attach"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// Output computes the output object named namespace/name: an EffectivePolicy, or a
// ClusterEffectivePolicy for namespace "", over the objects of that name (targets, in node
// order) and the policy kinds (kinds, by group and kind). ok=false when no policy reaches any
// of them. The object shares spec bytes, fieldSources maps and via lists with the memo and
// with other outputs: it is read-only.
func (s *Session) Output(namespace, name string, targets []topology.NodeID, kinds []*attach.KindIndex) (obj runtime.Object, ok bool) {
	var out []v1alpha1.Target
	for _, n := range targets {
		t := v1alpha1.Target{Group: n.Group, Kind: n.Kind, Name: n.Name}
		for _, k := range kinds {
			if tp, ok := s.targetPolicy(n, k); ok {
				t.Policies = append(t.Policies, tp)
			}
		}
		if len(t.Policies) > 0 {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, false
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].Kind < out[j].Kind
	})
	if namespace == "" {
		return &v1alpha1.ClusterEffectivePolicy{
			TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "ClusterEffectivePolicy"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Targets:    out,
		}, true
	}
	return &v1alpha1.EffectivePolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "EffectivePolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Targets:    out,
	}, true
}

func lessRef(a, b v1alpha1.ObjectReference) int {
	for _, p := range [][2]string{{a.Group, b.Group}, {a.Kind, b.Kind}, {a.Namespace, b.Namespace}, {a.Name, b.Name}, {a.SectionName, b.SectionName}} {
		if p[0] != p[1] {
			if p[0] < p[1] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func lessEffective(a, b v1alpha1.EffectiveSpec) bool {
	for i := 0; i < len(a.Via) && i < len(b.Via); i++ {
		if c := lessRef(a.Via[i], b.Via[i]); c != 0 {
			return c < 0
		}
	}
	if len(a.Via) != len(b.Via) {
		return len(a.Via) < len(b.Via)
	}
	return a.SectionName < b.SectionName
}
