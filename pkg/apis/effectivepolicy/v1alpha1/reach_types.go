package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +genclient:readonly
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// PolicyReach is named like the namespaced policy (or policies of several
// kinds sharing a name) it describes and lists, per policy kind, what the
// policy names, what it reaches and with which outcome.
type PolicyReach struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Policies holds one entry per policy kind with a policy of this name
	// and namespace, sorted by group and kind.
	// +optional
	// +listType=atomic
	Policies []ReachPolicy `json:"policies,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// PolicyReachList is a list of PolicyReach objects.
type PolicyReachList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []PolicyReach `json:"items"`
}

// +genclient
// +genclient:nonNamespaced
// +genclient:readonly
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterPolicyReach is the PolicyReach of cluster-scoped policies.
type ClusterPolicyReach struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Policies holds one entry per policy kind with a cluster-scoped policy
	// of this name, sorted by group and kind.
	// +optional
	// +listType=atomic
	Policies []ReachPolicy `json:"policies,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterPolicyReachList is a list of ClusterPolicyReach objects.
type ClusterPolicyReachList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []ClusterPolicyReach `json:"items"`
}

// ReachPolicy is what one policy (of one kind) names and reaches.
type ReachPolicy struct {
	// Group of the policy kind.
	Group string `json:"group"`
	// Kind of the policy kind.
	Kind string `json:"kind"`
	// Class is Direct or Inherited.
	Class PolicyClass `json:"class"`
	// Semantics names the rules the outcomes of Reaches were computed with,
	// as in the EffectivePolicy: Assumed when no descriptor or profile
	// describes the kind.
	// +optional
	Semantics string `json:"semantics,omitempty"`
	// AttachedTo holds one entry per target the policy names (targetRef,
	// targetRefs, or an object its selectors pick), in the policy's order.
	// +optional
	// +listType=atomic
	AttachedTo []AttachedTarget `json:"attachedTo,omitempty"`
	// Summary counts the targets the policy reaches, hidden ones included.
	Summary ReachSummary `json:"summary"`
	// HiddenTargets counts the reached targets in namespaces where the
	// caller may not get effective policies; they are counted in Summary
	// and not listed in Reaches.
	HiddenTargets int32 `json:"hiddenTargets"`
	// Reaches holds one entry per target (and stanza) the policy reaches,
	// sorted by group, kind, namespace, name, sectionName and stanza.
	// +optional
	// +listType=atomic
	Reaches []Reach `json:"reaches,omitempty"`
}

// AttachedTarget is one target a policy names, and whether it resolved.
type AttachedTarget struct {
	// Target is the object (or section) named.
	Target ObjectReference `json:"target"`
	// Resolved is true when the policy is attached there: the target
	// exists (or is a kind the cluster does not serve, a virtual target),
	// the policy is well-formed, and a ReferenceGrant allows a reference
	// into another namespace.
	Resolved bool `json:"resolved"`
	// Reason says why not when Resolved is false: TargetNotFound,
	// ReferenceGrantMissing or Malformed.
	// +optional
	Reason AttachmentReason `json:"reason,omitempty"`
	// Message says why not, in words.
	// +optional
	Message string `json:"message,omitempty"`
}

// AttachmentReason says why a named target did not resolve.
type AttachmentReason string

// The reasons a named target does not resolve.
const (
	// ReasonTargetNotFound: the target is of a served kind and does not exist.
	ReasonTargetNotFound AttachmentReason = "TargetNotFound"
	// ReasonReferenceGrantMissing: the target is in another namespace and no
	// ReferenceGrant there allows the policy to reach it.
	ReasonReferenceGrantMissing AttachmentReason = "ReferenceGrantMissing"
	// ReasonMalformed: the reference, or the whole policy, is malformed.
	ReasonMalformed AttachmentReason = "Malformed"
)

// ReachSummary counts reached targets by outcome. Every count is written,
// zeros included.
type ReachSummary struct {
	// Targets is the number of targets (and stanzas) reached.
	Targets int32 `json:"targets"`
	// Enforced counts the entries with outcome Enforced.
	Enforced int32 `json:"enforced"`
	// PartiallyEnforced counts the entries with outcome PartiallyEnforced.
	PartiallyEnforced int32 `json:"partiallyEnforced"`
	// Overridden counts the entries with outcome Overridden.
	Overridden int32 `json:"overridden"`
	// Conflicted counts the entries with outcome Conflicted.
	Conflicted int32 `json:"conflicted"`
	// Invalid counts the entries with outcome Invalid.
	Invalid int32 `json:"invalid"`
}

// Reach is one target (and stanza) a policy reaches, with the verdict the
// target's EffectivePolicy (or ClusterEffectivePolicy) gives the policy.
type Reach struct {
	// Target is the object reached; SectionName is set when the policy is
	// attached to a section of the target itself.
	Target ObjectReference `json:"target"`
	// AttachedTo is where the policy is attached on the way to the target.
	AttachedTo ObjectReference `json:"attachedTo"`
	// Stanza is Defaults, Overrides, or "" for Direct policies.
	Stanza Stanza `json:"stanza"`
	// Outcome over the contexts of the target.
	Outcome Outcome `json:"outcome"`
	// Message says why, naming the policies that beat this one.
	// +optional
	Message string `json:"message,omitempty"`
}
