package semantics

// What a profile is given: the policies as parsed (the engine keeps their attachments on them)
// and their stanzas.

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// PolicyID names a policy: its kind, namespace and name.
type PolicyID struct {
	GK              schema.GroupKind
	Namespace, Name string
}

// Display is namespace/name, or the name of a cluster-scoped policy.
func (p PolicyID) Display() string {
	if p.Namespace == "" {
		return p.Name
	}
	return p.Namespace + "/" + p.Name
}

// Entry is one stanza of a policy (docs/spec.md §5.1).
type Entry struct {
	Stanza   v1alpha1.Stanza
	Strategy v1alpha1.MergeStrategy
	Named    string // the strategy value the policy wrote (lower case), "" for none
	Spec     map[string]interface{}
	Schema   *merge.Schema // list-maps of the stanza's schema
	Leaves   int           // leaves of the spec (fieldSources entries it would set alone)
}

// NamedRef is one targetRef of a policy.
type NamedRef struct {
	Target     topology.NodeID // Section carries sectionName; Namespace "" for cluster-scoped kinds
	ExplicitNS bool            // targetRef.namespace was given
	Invalid    string          // malformed reference
}

// SelectorRef is one targetSelector of a policy.
type SelectorRef struct {
	GK       schema.GroupKind
	Selector labels.Selector
	// Wide is set when the selector looks beyond the policy's namespace (Envoy Gateway's
	// targetSelectors namespaces.from All or Selector); NamespaceSelector then picks the namespaces by
	// their labels (nil: all), and a target outside the policy's namespace needs a
	// ReferenceGrant there.
	Wide              bool
	NamespaceSelector labels.Selector
	// GatewayPods is set for an Istio workload selector (Descriptor.WorkloadSelectors): it
	// selects the Gateways (GK) whose pods carry the labels, not by the Gateways' own labels.
	GatewayPods bool
	// Ungranted is set with Wide when an object outside the policy's namespace needs no
	// ReferenceGrant to be selected (Descriptor.RootSelectorsMeshWide).
	Ungranted bool
}

// Policy is a policy as parsed: its targets, its stanzas (docs/spec.md §5.1) or why it is Invalid.
type Policy struct {
	ID          PolicyID
	DisplayName string // ID.Display(), kept: outputs name policies often
	Created     time.Time
	Raw         map[string]interface{}
	Labels      map[string]string // copied onto the policy's PolicyReach
	Refs        []NamedRef
	Selectors   []SelectorRef
	Entries     []Entry
	Invalid     string // whole policy is malformed
	// Untargeted is set when the policy names no target and its kind's UntargetedScope lets
	// it apply to its namespace.
	Untargeted bool
	Class      v1alpha1.PolicyClass
	Resolution Resolution // current attachments (maintained by the engine)
	// RejectedBy is the policy that beat this one whole under a profile's whole-policy
	// same-target rule, nil when none did (maintained by the engine).
	RejectedBy *Policy
}

// WideSelectors reports whether a selector of p looks beyond its namespace.
func (p *Policy) WideSelectors() bool {
	for _, s := range p.Selectors {
		if s.Wide {
			return true
		}
	}
	return false
}

// PathParts splits a dotted path into its field names.
func PathParts(p string) []string { return strings.Split(p, ".") }

// Lookup walks a dotted path from the object root.
func Lookup(obj map[string]interface{}, path string) (interface{}, bool) {
	var cur interface{} = obj
	for _, part := range PathParts(path) {
		m, ok := cur.(map[string]interface{})
		if !ok {
			return nil, false
		}
		cur, ok = m[part]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

// Attachment is one place a policy is attached to (or, with invalid set,
// listed at as an Invalid source).
type Attachment struct {
	Node    topology.NodeID
	Invalid string
	Virtual bool
}

// Resolution is where a policy is attached.
type Resolution struct {
	Attachments []Attachment
	Named       []topology.NodeID // objects named by targetRefs (for re-resolution)
	CrossNS     []string          // namespaces named by targetRef.namespace
}

// EstablishedBefore orders policies as docs/spec.md §5.1 does: older creationTimestamp first, then
// namespace/name.
func EstablishedBefore(a, b *Policy) bool {
	if !a.Created.Equal(b.Created) {
		return a.Created.Before(b.Created)
	}
	return a.DisplayName < b.DisplayName
}
