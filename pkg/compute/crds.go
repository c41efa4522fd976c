package compute

// CustomResourceDefinitions: which kinds the cluster serves and which are
// policy kinds (docs/spec.md §4), rebuilt when a CRD or a descriptor changes.

import (
	"reflect"
	"sort"
	"strings"
	"sync"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/policies"
)

func (st *state) applyCRD(name string, u *unstructured.Unstructured) []Key {
	var info *crdInfo
	if u != nil {
		info = parseCRD(name, u)
		if info == nil {
			return nil
		}
		if old := st.cat.crds[name]; old != nil && reflect.DeepEqual(old.fp, info.fp) {
			return nil
		}
	} else if st.cat.crds[name] == nil {
		return nil
	}
	ks := keySet{}
	if !st.bulk {
		for _, k := range st.keys() {
			ks[k] = true
		}
	}
	if info != nil {
		st.cat.crds[name] = info
	} else {
		delete(st.cat.crds, name)
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
	kinds := st.cat.policyKinds()
	for id := range st.att.Policies() {
		st.policyChanged(id) // its kind may be gone, or parsed anew
	}
	st.att.SetKinds(kinds, func(pk *policies.Kind, p *semantics.Policy) *semantics.Policy {
		np := policies.Parse(pk, p.Raw, p.ID.Namespace, p.ID.Name, p.Created, st.defaultStrategy, st.cat.clusterScoped)
		np.Labels = p.Labels
		return np
	})
	st.kindsGen++
}

// crdCatalog is what the descriptors and the CRDs fed to the engine say:
// which kinds the cluster serves, which are cluster-scoped, and which are
// policy kinds.
type crdCatalog struct {
	descs   map[schema.GroupKind]Descriptor
	crds    map[string]*crdInfo
	served  map[schema.GroupKind]bool // kinds a CRD serves
	cluster map[schema.GroupKind]bool // cluster-scoped kinds a CRD serves
}

type crdInfo struct {
	name       string
	gk         schema.GroupKind
	labels     map[string]string
	namespaced bool
	plural     string
	served     []string
	storage    string
	schemas    map[string]*apiextv1.JSONSchemaProps
	fp         interface{}
}

// policyKinds recomputes the served kinds from the CRDs and returns the
// policy kinds: those a descriptor names, or whose CRD's label or schema
// says they are policies (crdDescriptor: their semantics are Assumed); the
// CRD first by name wins.
func (c *crdCatalog) policyKinds() map[schema.GroupKind]*policies.Kind {
	c.served = map[schema.GroupKind]bool{}
	c.cluster = map[schema.GroupKind]bool{}
	newKinds := map[schema.GroupKind]*policies.Kind{}
	names := make([]string, 0, len(c.crds))
	for n := range c.crds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		crd := c.crds[n]
		if len(crd.served) == 0 {
			continue
		}
		c.served[crd.gk] = true
		if !crd.namespaced {
			c.cluster[crd.gk] = true
		}
		version := crd.storage
		if version == "" || !contains(crd.served, version) {
			version = crd.served[0]
		}
		d, described := c.descs[crd.gk]
		if !described {
			var ok bool
			if d, ok = crdDescriptor(crd, crd.schemas[version]); !ok {
				continue
			}
		}
		if _, dup := newKinds[crd.gk]; dup {
			continue
		}
		prof := policies.ProfileOf(&d)
		sem := prof.Name()
		if !described {
			sem = v1alpha1.SemanticsAssumed
		}
		newKinds[crd.gk] = &policies.Kind{
			GK:         crd.gk,
			GVR:        schema.GroupVersionResource{Group: crd.gk.Group, Version: version, Resource: crd.plural},
			Descriptor: d,
			Namespaced: crd.namespaced,
			Schema:     crd.schemas[version],
			Profile:    prof,
			Semantics:  sem,
		}
	}
	return newKinds
}

var (
	schemeKindsOnce sync.Once
	schemeKinds     map[schema.GroupKind]bool
)

func builtinKinds() map[schema.GroupKind]bool {
	schemeKindsOnce.Do(func() {
		schemeKinds = map[schema.GroupKind]bool{}
		for gvk := range clientscheme.Scheme.AllKnownTypes() {
			if gvk.Version == runtime.APIVersionInternal || strings.HasSuffix(gvk.Kind, "List") {
				continue
			}
			schemeKinds[gvk.GroupKind()] = true
		}
	})
	return schemeKinds
}

var builtinClusterKinds = map[schema.GroupKind]bool{
	{Group: "", Kind: "Namespace"}:                                                  true,
	{Group: "", Kind: "Node"}:                                                       true,
	{Group: "", Kind: "PersistentVolume"}:                                           true,
	{Group: topology.GatewayGroup, Kind: "GatewayClass"}:                            true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                       true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                                 true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:               true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:   true,
}

// clusterScoped reports whether objects of gk are cluster-scoped.
func (c *crdCatalog) clusterScoped(gk schema.GroupKind) bool {
	return builtinClusterKinds[gk] || c.cluster[gk]
}

// serves reports whether the cluster serves gk: a kind of the client-go
// scheme, a kind served by a CRD fed to the engine, or a Gateway API kind
// the engine models (the server watches those).
func (c *crdCatalog) serves(gk schema.GroupKind) bool {
	if builtinKinds()[gk] || c.served[gk] || topology.IsTopologyGK(gk) {
		return true
	}
	return false
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
