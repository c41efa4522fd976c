package policies

// Policy kinds found by their schema: GEP-713 no longer requires the
// gateway.networking.k8s.io/policy label, and many policy CRDs lack it. A CRD without a
// descriptor and without the label is a policy kind when its schema says so (SchemaClass).

import (
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// SchemaClass decides from a CRD version's schema whether its kind is a policy, and of which
// class. The rule, exactly: spec.targetRef is an object, or spec.targetRefs an array of
// objects, whose properties include group, kind and name, each of type string (GEP-713's
// LocalPolicyTargetReference and its sectionName variant). Such a kind is Inherited when spec
// also has a defaults, default, overrides or override property, else Direct. Anything else is
// not a policy: a reference with apiVersion instead of group (a HorizontalPodAutoscaler-style
// scaleTargetRef or targetRef), references of routes (parentRefs) or elsewhere than directly
// under spec, references without a schema for their fields (x-kubernetes-preserve-unknown-
// fields), and targetRef(s) of another shape.
func SchemaClass(s *apiextv1.JSONSchemaProps) (v1alpha1.PolicyClass, bool) {
	if s == nil {
		return "", false
	}
	spec, ok := s.Properties["spec"]
	if !ok {
		return "", false
	}
	ref, hasRef := spec.Properties["targetRef"]
	refs, hasRefs := spec.Properties["targetRefs"]
	isPolicy := hasRef && isTargetRefSchema(&ref) ||
		hasRefs && refs.Type == "array" && refs.Items != nil && isTargetRefSchema(refs.Items.Schema)
	if !isPolicy {
		return "", false
	}
	for _, stanza := range []string{"defaults", "default", "overrides", "override"} {
		if _, ok := spec.Properties[stanza]; ok {
			return v1alpha1.ClassInherited, true
		}
	}
	return v1alpha1.ClassDirect, true
}

// isTargetRefSchema reports whether s describes an object with string group, kind and name.
func isTargetRefSchema(s *apiextv1.JSONSchemaProps) bool {
	if s == nil || s.Type != "object" {
		return false
	}
	for _, f := range []string{"group", "kind", "name"} {
		if p, ok := s.Properties[f]; !ok || p.Type != "string" {
			return false
		}
	}
	return true
}
