package policies

import (
	"fmt"
	"sort"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics/gep"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// Kind is a CRD the engine treats as a policy.
type Kind struct {
	GK         schema.GroupKind
	GVR        schema.GroupVersionResource
	Descriptor Descriptor
	Namespaced bool
	Schema     *apiextv1.JSONSchemaProps // the openAPIV3Schema of the watched version (may be nil)
	Profile    semantics.Profile         // the descriptor's semantics
	// Semantics is what the kind's answers say they were computed with (the
	// API's semantics field): the profile's name when a descriptor describes
	// the kind, v1alpha1.SemanticsAssumed when only its CRD's label or schema
	// says it is a policy kind (docs/spec.md §4.1, "Saying when we guess").
	Semantics string
	// merge caches the profile's merge schema at a stanza path for a named
	// strategy; filled while parsing policies, which holds the engine's
	// write lock.
	merge map[mergeSchemaKey]*merge.Schema
}

type mergeSchemaKey struct{ path, named string }

// MergeSchema returns the merge schema of the stanza at a dotted path, for
// an entry that names strategy named (as written, lower case; "" for none).
func (pk *Kind) MergeSchema(path, named string) *merge.Schema {
	key := mergeSchemaKey{path, named}
	if m, ok := pk.merge[key]; ok {
		return m
	}
	prof := pk.Profile
	if prof == nil {
		prof = gep.Profile{}
	}
	m := prof.MergeSchema(pk.GK.Kind, schemaAt(pk.Schema, path), named)
	if pk.merge == nil {
		pk.merge = map[mergeSchemaKey]*merge.Schema{}
	}
	pk.merge[key] = m
	return m
}

func schemaAt(root *apiextv1.JSONSchemaProps, path string) *apiextv1.JSONSchemaProps {
	s := root
	for _, part := range semantics.PathParts(path) {
		s = merge.SchemaChild(s, part)
		if s == nil {
			return nil
		}
	}
	return s
}

// without returns a copy of m (a map at path base) with the given dotted
// paths removed; paths not under base are ignored.
func without(m map[string]interface{}, base string, paths []string) map[string]interface{} {
	out := deepCopyMap(m)
	for _, p := range paths {
		if !strings.HasPrefix(p, base+".") {
			continue
		}
		parts := semantics.PathParts(strings.TrimPrefix(p, base+"."))
		cur := out
		for i, part := range parts {
			if i == len(parts)-1 {
				delete(cur, part)
				break
			}
			next, ok := cur[part].(map[string]interface{})
			if !ok {
				break
			}
			cur = next
		}
	}
	return out
}

func deepCopyMap(m map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(m))
	for k, v := range m {
		out[k] = DeepCopyValue(v)
	}
	return out
}

// DeepCopyValue copies a JSON value, its objects and lists too.
func DeepCopyValue(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		return deepCopyMap(t)
	case []interface{}:
		l := make([]interface{}, len(t))
		for i, it := range t {
			l[i] = DeepCopyValue(it)
		}
		return l
	}
	return v
}

func parseRef(m map[string]interface{}, policyNS string, clusterScoped func(schema.GroupKind) bool) semantics.NamedRef {
	var r semantics.NamedRef
	g, gok := m["group"]
	k, kok := m["kind"].(string)
	n, nok := m["name"].(string)
	gs, gsok := g.(string)
	if (gok && !gsok && g != nil) || !kok || !nok || k == "" || n == "" {
		r.Invalid = "a target reference needs string fields kind and name (and group)"
		return r
	}
	if gs == "core" {
		gs = ""
	}
	r.Target = topology.NodeID{Group: gs, Kind: k, Name: n, Namespace: policyNS}
	if v, ok := m["namespace"]; ok && v != nil {
		s, ok := v.(string)
		if !ok {
			r.Invalid = "targetRef namespace must be a string"
			return r
		}
		if s != "" {
			r.Target.Namespace = s
			r.ExplicitNS = s != policyNS
		}
	}
	if v, ok := m["sectionName"]; ok && v != nil {
		s, ok := v.(string)
		if !ok {
			r.Invalid = "targetRef sectionName must be a string"
			return r
		}
		r.Target.Section = s
	}
	if clusterScoped(r.Target.GK()) {
		r.Target.Namespace = ""
		r.ExplicitNS = false
		// A namespaced policy may target its own Namespace; another one is
		// a cross-namespace reference (it would reach everything there).
		if topology.IsNamespaceNode(r.Target) && policyNS != "" && r.Target.Name != policyNS {
			r.ExplicitNS = true
		}
	}
	return r
}

func maxItemsAt(root *apiextv1.JSONSchemaProps, path string) (int64, bool) {
	s := schemaAt(root, path)
	if s == nil || s.MaxItems == nil {
		return 0, false
	}
	return *s.MaxItems, true
}

// MaxSpecDepth bounds how deeply a policy's spec may nest (objects and
// lists); a deeper policy is Invalid. The output wraps the merged spec in
// about ten more levels (list, object, targets, policies, effective, watch
// event), and Kubernetes JSON decoders refuse documents nested more than
// 10,000 levels deep: without a bound, one policy nested close to what the
// kube-apiserver accepts would make the EffectivePolicy (and every list
// holding it) undecodable for every client. Real policies nest a few dozen
// levels at most.
const MaxSpecDepth = merge.MaxDepth

// tooDeep reports whether v nests more than limit levels of objects and lists
// (v itself is level 1). It stops descending past limit, so its recursion is
// bounded whatever the input.
func tooDeep(v interface{}, limit int) bool {
	if limit < 1 {
		switch v.(type) {
		case map[string]interface{}, []interface{}:
			return true
		}
		return false
	}
	switch c := v.(type) {
	case map[string]interface{}:
		for _, x := range c {
			if tooDeep(x, limit-1) {
				return true
			}
		}
	case []interface{}:
		for _, x := range c {
			if tooDeep(x, limit-1) {
				return true
			}
		}
	}
	return false
}

// targetList reads the list of target entries at path (targetRefs or
// selector lists). A value that is not a list is recorded as an invalid
// reference; a list longer than the CRD's maxItems makes the whole policy
// invalid (its entries are still read, so it can be listed at its targets).
func targetList(p *semantics.Policy, obj map[string]interface{}, pk *Kind, path string) []interface{} {
	v, found := semantics.Lookup(obj, path)
	if !found || v == nil {
		return nil
	}
	l, isList := v.([]interface{})
	if !isList {
		p.Refs = append(p.Refs, semantics.NamedRef{Invalid: path + " must be a list"})
		return nil
	}
	if limit, ok := maxItemsAt(pk.Schema, path); ok && int64(len(l)) > limit {
		p.Invalid = fmt.Sprintf("%s has %d items, more than the %d the CRD allows", path, len(l), limit)
	}
	return l
}

func parseSelectorRef(m map[string]interface{}, selRaw interface{}) (semantics.SelectorRef, error) {
	k, ok := m["kind"].(string)
	if !ok || k == "" {
		return semantics.SelectorRef{}, fmt.Errorf("kind is required")
	}
	g := ""
	if v, ok := m["group"]; ok && v != nil {
		s, isStr := v.(string)
		if !isStr {
			return semantics.SelectorRef{}, fmt.Errorf("group must be a string")
		}
		g = s
	}
	if g == "core" {
		g = ""
	}
	sm, ok := selRaw.(map[string]interface{})
	if !ok {
		return semantics.SelectorRef{}, fmt.Errorf("selector must be an object")
	}
	sel, err := topology.ParseSelector(sm)
	if err != nil {
		return semantics.SelectorRef{}, err
	}
	return semantics.SelectorRef{GK: schema.GroupKind{Group: g, Kind: k}, Selector: sel}, nil
}

func jsonType(v interface{}) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, int, int32, float64, float32:
		return "a number"
	case []interface{}:
		return "a list"
	case map[string]interface{}:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
