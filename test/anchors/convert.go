package anchors

import (
	"fmt"
	"strings"

	"github.com/kuadrant/policy-machinery/machinery"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwapiv1alpha2 "sigs.k8s.io/gateway-api/apis/v1alpha2"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale"
)

// Inputs are the generated objects as policy-machinery's Gateway API
// topology takes them: typed, as kuadrant-operator's informers hand them
// over. Namespaces, CRDs and ReferenceGrants have no place in it
// (NewGatewayAPITopology has no option for them), so they are left out.
type Inputs struct {
	GatewayClasses []*gwapiv1.GatewayClass
	Gateways       []*gwapiv1.Gateway
	HTTPRoutes     []*gwapiv1.HTTPRoute // mesh routes (parentRef a Service) too
	Services       []*corev1.Service
	Policies       []*Policy
}

// Convert turns generated objects into Inputs with
// runtime.DefaultUnstructuredConverter, and the generated policies into
// Policy values.
func Convert(objs []*unstructured.Unstructured) (*Inputs, error) {
	in := &Inputs{}
	listMap := map[string]string{} // policy kind -> its list-map field
	for _, k := range scale.PolicyKinds {
		listMap[k.Kind] = k.ListMapField
	}
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		var err error
		switch {
		case gvk.Group == scale.PolicyGroup:
			var p *Policy
			p, err = convertPolicy(u, listMap[gvk.Kind])
			in.Policies = append(in.Policies, p)
		case gvk.Group == scale.GatewayGroup && gvk.Kind == "GatewayClass":
			o := &gwapiv1.GatewayClass{}
			err = fromUnstructured(u, o)
			in.GatewayClasses = append(in.GatewayClasses, o)
		case gvk.Group == scale.GatewayGroup && gvk.Kind == "Gateway":
			o := &gwapiv1.Gateway{}
			err = fromUnstructured(u, o)
			in.Gateways = append(in.Gateways, o)
		case gvk.Group == scale.GatewayGroup && gvk.Kind == "HTTPRoute":
			o := &gwapiv1.HTTPRoute{}
			err = fromUnstructured(u, o)
			in.HTTPRoutes = append(in.HTTPRoutes, o)
		case gvk.Group == "" && gvk.Kind == "Service":
			o := &corev1.Service{}
			err = fromUnstructured(u, o)
			in.Services = append(in.Services, o)
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s/%s: %w", gvk.Kind, u.GetNamespace(), u.GetName(), err)
		}
	}
	return in, nil
}

func fromUnstructured(u *unstructured.Unstructured, into interface{}) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}

// convertPolicy reads a generated policy's targets, stanzas and strategies
// the way this project's engine does (docs/compute.md, "Policies"):
// fields outside the stanzas (minus targetRefs and strategy) are implicit
// defaults, merged into an explicit defaults stanza if there is one (the
// stanza wins); a stanza's strategy field wins over the spec's; a policy
// with both stanzas and no strategy patches; otherwise Atomic.
func convertPolicy(u *unstructured.Unstructured, listMapField string) (*Policy, error) {
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	p := &Policy{}
	p.APIVersion, p.Kind = u.GetAPIVersion(), u.GetKind()
	p.Namespace, p.Name = u.GetNamespace(), u.GetName()
	p.CreationTimestamp = u.GetCreationTimestamp()
	refs, err := targetRefs(spec, p.Namespace)
	if err != nil {
		return nil, err
	}
	p.targetRefs = refs

	defaults, _ := spec["defaults"].(map[string]interface{})
	overrides, _ := spec["overrides"].(map[string]interface{})
	specStrategy, _ := spec["strategy"].(string)
	implicit := map[string]interface{}{}
	for k, v := range spec {
		switch k {
		case "targetRefs", "strategy", "defaults", "overrides":
		default:
			implicit[k] = v
		}
	}
	if len(implicit) > 0 {
		for k, v := range defaults {
			implicit[k] = v
		}
		defaults = implicit
	}
	both := defaults != nil && overrides != nil
	if defaults != nil {
		p.defaults = newStanza(defaults, specStrategy, both, listMapField, p.GetLocator())
	}
	if overrides != nil {
		p.overrides = newStanza(overrides, specStrategy, both, listMapField, p.GetLocator())
	}
	p.rules = ownRules(p.defaults, p.overrides)
	return p, nil
}

// newStanza splits a stanza into rules, every one sourced from the policy.
func newStanza(m map[string]interface{}, specStrategy string, both bool, listMapField, locator string) *stanza {
	strategy, _ := m["strategy"].(string)
	if strategy == "" {
		strategy = specStrategy
	}
	s := &stanza{rules: Rules{}}
	switch strings.ToLower(strategy) {
	case "atomic":
		s.atomic = true
	case "patch", "merge":
	default:
		s.atomic = !both
	}
	for k, v := range m {
		if k == "strategy" {
			continue
		}
		items, isList := v.([]interface{})
		if k != listMapField || !isList {
			s.rules[k] = Rule{Value: v, Source: locator}
			continue
		}
		for _, it := range items {
			item, _ := it.(map[string]interface{})
			name, _ := item["name"].(string)
			s.rules[k+"/"+name] = Rule{Value: item, Source: locator}
		}
	}
	return s
}

// targetRefs turns spec.targetRefs into the reference type kuadrant-operator's
// policies use (machinery.LocalPolicyTargetReferenceWithSectionName, with the
// policy's namespace). Its locator carries that namespace, which never
// matches a cluster-scoped object's locator; kuadrant's policies never
// target one, the generated ones target the GatewayClass, so a reference to
// a cluster-scoped kind gets no namespace (else those policies would attach
// nowhere).
func targetRefs(spec map[string]interface{}, ns string) ([]machinery.PolicyTargetReference, error) {
	raw, _ := spec["targetRefs"].([]interface{})
	if len(raw) == 0 {
		return nil, fmt.Errorf("no spec.targetRefs")
	}
	var out []machinery.PolicyTargetReference
	for _, r := range raw {
		m, _ := r.(map[string]interface{})
		group, _ := m["group"].(string)
		kind, _ := m["kind"].(string)
		name, _ := m["name"].(string)
		ref := gwapiv1alpha2.LocalPolicyTargetReferenceWithSectionName{
			LocalPolicyTargetReference: gwapiv1alpha2.LocalPolicyTargetReference{
				Group: gwapiv1.Group(group), Kind: gwapiv1.Kind(kind), Name: gwapiv1.ObjectName(name),
			},
		}
		if s, _ := m["sectionName"].(string); s != "" {
			sn := gwapiv1.SectionName(s)
			ref.SectionName = &sn
		}
		policyNS := ns
		if clusterScoped(group, kind) {
			policyNS = ""
		}
		out = append(out, machinery.LocalPolicyTargetReferenceWithSectionName{
			LocalPolicyTargetReferenceWithSectionName: ref, PolicyNamespace: policyNS,
		})
	}
	return out, nil
}

func clusterScoped(group, kind string) bool {
	return (group == scale.GatewayGroup && kind == "GatewayClass") || (group == "" && kind == "Namespace")
}
