package compute

// Policy objects: applying one (parsed by pkg/compute/policies, attached by
// pkg/compute/attach), and the keys a policy's attachments reach.

import (
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/policies"
)

func (st *state) applyPolicy(gk schema.GroupKind, ns, name string, u *unstructured.Unstructured) []Key {
	ki := st.att.Kind(gk)
	if !ki.Kind.Namespaced {
		ns = ""
	} else if ns == "" {
		return nil
	}
	id := semantics.PolicyID{GK: gk, Namespace: ns, Name: name}
	ks := keySet{}
	old := st.att.Policy(id)
	kept := ki.Kind.Descriptor.Annotations
	if u != nil && old != nil && reflect.DeepEqual(old.Raw["spec"], u.Object["spec"]) && old.Created.Equal(u.GetCreationTimestamp().Time) &&
		reflect.DeepEqual(keptAnnotations(old.Raw, kept), keptAnnotations(u.Object, kept)) {
		// Nothing any output shows changed; the labels (copied onto the
		// policy's PolicyReach) may have.
		st.structural = false
		if l := u.GetLabels(); !sameLabels(old.Labels, l) {
			old.Labels = l
			st.policyChanged(id)
		}
		return nil
	}
	st.policyChanged(id)
	var oldRes semantics.Resolution
	if old != nil {
		oldRes = old.Resolution
		st.affect(old, ks)
		st.att.Remove(old)
	}
	if u != nil {
		// Keep a private copy of the spec (descriptor paths all start at
		// spec; the rest of the object is not needed): callers may reuse
		// their object.
		p := policies.Parse(ki.Kind, specOnlyCopy(u.Object, kept), ns, name, u.GetCreationTimestamp().Time, st.defaultStrategy, st.cat.clusterScoped)
		p.Labels = u.GetLabels()
		st.att.Add(p)
		st.affect(p, ks)
		// Same attachment points: the contexts (paths and vias) of every
		// target are unchanged, only folds are.
		if old != nil && old.Class == p.Class && slices.Equal(oldRes.Attachments, p.Resolution.Attachments) {
			st.structural = false
		}
	}
	return ks.sorted()
}

// sameLabels compares label sets (nil and empty are the same).
func sameLabels(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// specOnlyCopy copies what policies.Parse and the kind's profile read of a policy object: its
// spec (or its absence) and the annotations of kept that it has.
func specOnlyCopy(obj map[string]interface{}, kept []string) map[string]interface{} {
	out := map[string]interface{}{}
	if spec, ok := obj["spec"]; ok {
		out["spec"] = policies.DeepCopyValue(spec)
	}
	if ann := keptAnnotations(obj, kept); ann != nil {
		out["metadata"] = map[string]interface{}{"annotations": ann}
	}
	return out
}

// keptAnnotations returns the annotations of kept that obj has (nil for none).
func keptAnnotations(obj map[string]interface{}, kept []string) map[string]interface{} {
	if len(kept) == 0 {
		return nil
	}
	md, _ := obj["metadata"].(map[string]interface{})
	all, _ := md["annotations"].(map[string]interface{})
	var out map[string]interface{}
	for _, k := range kept {
		if v, ok := all[k]; ok {
			if out == nil {
				out = map[string]interface{}{}
			}
			out[k] = v
		}
	}
	return out
}

// reresolve recomputes the attachments of ps, adding old and new reach to ks.
func (st *state) reresolve(ps []*semantics.Policy, ks keySet) {
	for _, p := range ps {
		st.policyChanged(p.ID)
		st.affect(p, ks)
		st.att.Reresolve(p)
		st.affect(p, ks)
	}
}

// affect adds the keys a policy's current attachments reach.
func (st *state) affect(p *semantics.Policy, ks keySet) {
	if st.bulk {
		return
	}
	seen := topology.Visited{}
	for _, a := range p.Resolution.Attachments {
		ks[keyOf(a.Node)] = true
		if a.Invalid == "" && p.Class == v1alpha1.ClassInherited {
			st.subtree(a.Node, ks, seen)
			for _, r := range meshRoots(st.graph, st.att.Kind(p.ID.GK), a.Node) {
				st.subtree(r, ks, seen)
			}
		}
	}
}
