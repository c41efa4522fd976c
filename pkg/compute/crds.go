package compute

// CustomResourceDefinitions: which kinds the cluster serves and which are
// policy kinds (docs/spec.md §4), rebuilt when a CRD or a descriptor changes.

import (
	"reflect"
	"sort"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/policies"
)

func (st *state) applyCRD(name string, u *unstructured.Unstructured) []Key {
	var info *crdInfo
	if u != nil {
		info = parseCRD(name, u)
		if info == nil {
			return nil
		}
		if old := st.crds[name]; old != nil && reflect.DeepEqual(old.fp, info.fp) {
			return nil
		}
	} else if st.crds[name] == nil {
		return nil
	}
	ks := keySet{}
	if !st.bulk {
		for _, k := range st.keys() {
			ks[k] = true
		}
	}
	if info != nil {
		st.crds[name] = info
	} else {
		delete(st.crds, name)
	}
	st.rebuildKinds()
	if !st.bulk {
		for _, k := range st.keys() {
			ks[k] = true
		}
	}
	return ks.sorted()
}

func parseCRD(name string, u *unstructured.Unstructured) *crdInfo {
	var crd apiextv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &crd); err != nil {
		return nil
	}
	info := &crdInfo{
		name:       name,
		gk:         schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind},
		labels:     crd.Labels,
		namespaced: crd.Spec.Scope != apiextv1.ClusterScoped,
		plural:     crd.Spec.Names.Plural,
		schemas:    map[string]*apiextv1.JSONSchemaProps{},
		fp:         []interface{}{policies.DeepCopyValue(u.Object["spec"]), crd.Labels},
	}
	if info.gk.Kind == "" {
		return nil
	}
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if v.Served {
			info.served = append(info.served, v.Name)
		}
		if v.Storage {
			info.storage = v.Name
		}
		if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			info.schemas[v.Name] = v.Schema.OpenAPIV3Schema
		}
	}
	return info
}

// rebuildKinds recomputes policy kinds and served kinds from the CRDs, then
// re-parses and re-resolves every policy.
func (st *state) rebuildKinds() {
	st.crdServed = map[schema.GroupKind]bool{}
	st.clusterKinds = map[schema.GroupKind]bool{}
	newKinds := map[schema.GroupKind]*policies.Kind{}
	names := make([]string, 0, len(st.crds))
	for n := range st.crds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := st.crds[n]
		if len(c.served) == 0 {
			continue
		}
		st.crdServed[c.gk] = true
		if !c.namespaced {
			st.clusterKinds[c.gk] = true
		}
		version := c.storage
		if version == "" || !contains(c.served, version) {
			version = c.served[0]
		}
		d, ok := st.descs[c.gk]
		if !ok {
			if d, ok = crdDescriptor(c, c.schemas[version]); !ok {
				continue
			}
		}
		if _, dup := newKinds[c.gk]; dup {
			continue
		}
		newKinds[c.gk] = &policies.Kind{
			GK:         c.gk,
			GVR:        schema.GroupVersionResource{Group: c.gk.Group, Version: version, Resource: c.plural},
			Descriptor: d,
			Namespaced: c.namespaced,
			Schema:     c.schemas[version],
			Profile:    policies.ProfileOf(&d),
		}
	}
	for id := range st.att.Policies() {
		st.policyChanged(id) // its kind may be gone, or parsed anew
	}
	st.att.SetKinds(newKinds, func(pk *policies.Kind, p *semantics.Policy) *semantics.Policy {
		np := policies.Parse(pk, p.Raw, p.ID.Namespace, p.ID.Name, p.Created, st.defaultStrategy, st.clusterScoped)
		np.Labels = p.Labels
		return np
	})
	st.kindsGen++
}

// crdDescriptor recognizes a CRD without a descriptor as a policy kind: by the GEP-713 label
// when it has one (any other value than direct, true or inherited says it is not a policy),
// else by its schema (policies.SchemaClass).
func crdDescriptor(c *crdInfo, s *apiextv1.JSONSchemaProps) (Descriptor, bool) {
	class, ok := policies.SchemaClass(s)
	if v, labeled := c.labels["gateway.networking.k8s.io/policy"]; labeled {
		switch strings.ToLower(v) {
		case "direct", "true":
			class, ok = v1alpha1.ClassDirect, true
		case "inherited":
			class, ok = v1alpha1.ClassInherited, true
		default:
			ok = false
		}
	}
	if !ok {
		return Descriptor{}, false
	}
	return policies.ConventionDescriptor(c.gk.Group, c.gk.Kind, class), true
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
