package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// PolicyClass is the GEP-713 class of a policy kind.
type PolicyClass string

const (
	// ClassDirect policies affect only the object they target.
	ClassDirect PolicyClass = "Direct"
	// ClassInherited policies flow down the hierarchy as defaults or overrides.
	ClassInherited PolicyClass = "Inherited"
)

// Stanza says which part of a policy a source entry stands for.
type Stanza string

const (
	// StanzaDefaults is a defaults stanza, or the implicit top-level spec proper.
	StanzaDefaults Stanza = "Defaults"
	// StanzaOverrides is an overrides stanza.
	StanzaOverrides Stanza = "Overrides"
	// StanzaNone is used for Direct policies.
	StanzaNone Stanza = ""
)

// MergeStrategy is a GEP-713 merge strategy.
type MergeStrategy string

// The merge strategies a source reports: None for Direct kinds, the four GEP-713 strategies,
// and Custom where an implementation's rule decided (docs/spec.md §4.1).
const (
	MergeNone            MergeStrategy = "None"
	MergeAtomicDefaults  MergeStrategy = "AtomicDefaults"
	MergeAtomicOverrides MergeStrategy = "AtomicOverrides"
	MergePatchDefaults   MergeStrategy = "PatchDefaults"
	MergePatchOverrides  MergeStrategy = "PatchOverrides"
	MergeCustom          MergeStrategy = "Custom"
)

// Outcome says how much of a source survived in the effective specs of a target.
type Outcome string

const (
	// OutcomeEnforced means every leaf of the source survives in every context it takes part in.
	OutcomeEnforced Outcome = "Enforced"
	// OutcomePartiallyEnforced means some leaves survive somewhere, not all everywhere.
	OutcomePartiallyEnforced Outcome = "PartiallyEnforced"
	// OutcomeOverridden means no leaf survives anywhere.
	OutcomeOverridden Outcome = "Overridden"
	// OutcomeConflicted means it lost to an established policy under merge strategy None.
	OutcomeConflicted Outcome = "Conflicted"
	// OutcomeInvalid means malformed, or a target the policy may not reach; listed, never merged.
	OutcomeInvalid Outcome = "Invalid"
)

// SemanticsAssumed is the semantics of a policy kind that no descriptor or
// profile describes, found by its CRD's gateway.networking.k8s.io/policy
// label or by its schema (docs/spec.md §4.2–4.3): its answers are computed
// with the GEP fold (docs/spec.md §5) as a guess, not with the rules of the
// implementation that serves the kind. A descriptor naming the kind's
// semantics replaces the guess (docs/policy-kinds.md).
const SemanticsAssumed = "Assumed"

// +genclient
// +genclient:readonly
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// EffectivePolicy is named like the namespaced object(s) it describes and
// lists, per target, the policies that reach it and their merged result.
type EffectivePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Targets holds one entry per object of this name and namespace that a
	// policy reaches, sorted by group and kind.
	// +optional
	// +listType=atomic
	Targets []Target `json:"targets,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// EffectivePolicyList is a list of EffectivePolicy objects.
type EffectivePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []EffectivePolicy `json:"items"`
}

// +genclient
// +genclient:nonNamespaced
// +genclient:readonly
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterEffectivePolicy is the EffectivePolicy of cluster-scoped targets
// (GatewayClass, Namespace, ...).
type ClusterEffectivePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Targets holds one entry per cluster-scoped object of this name that a
	// policy reaches, sorted by group and kind.
	// +optional
	// +listType=atomic
	Targets []Target `json:"targets,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterEffectivePolicyList is a list of ClusterEffectivePolicy objects.
type ClusterEffectivePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []ClusterEffectivePolicy `json:"items"`
}

// Target is one object that policies reach.
type Target struct {
	// Group of the target ("" for the core group).
	Group string `json:"group"`
	// Kind of the target.
	Kind string `json:"kind"`
	// Name of the target; the same as the enclosing object's name.
	Name string `json:"name"`
	// Policies holds one entry per policy kind that reaches the target,
	// sorted by group and kind.
	// +optional
	// +listType=atomic
	Policies []TargetPolicy `json:"policies,omitempty"`
}

// TargetPolicy is what one policy kind adds up to for a target.
type TargetPolicy struct {
	// Group of the policy kind.
	Group string `json:"group"`
	// Kind of the policy kind.
	Kind string `json:"kind"`
	// Class is Direct or Inherited.
	Class PolicyClass `json:"class"`
	// Semantics names the rules this entry was computed with: the semantics
	// of the kind's descriptor (GEP, GatewayAPI, EnvoyGateway, Kuadrant,
	// NGINXGatewayFabric, ...), or Assumed when no descriptor or profile
	// describes the kind and the GEP fold was applied as a guess.
	// +optional
	Semantics string `json:"semantics,omitempty"`
	// Sources holds one entry per policy (and stanza) of this kind that
	// reaches the target, established first.
	// +optional
	// +listType=atomic
	Sources []PolicySource `json:"sources,omitempty"`
	// Effective holds one entry per distinct context, sorted by via.
	// +optional
	// +listType=atomic
	Effective []EffectiveSpec `json:"effective,omitempty"`
}

// PolicySource is one policy (and stanza) that reaches a target.
type PolicySource struct {
	// Namespace of the policy; "" for a cluster-scoped policy.
	Namespace string `json:"namespace"`
	// Name of the policy.
	Name string `json:"name"`
	// AttachedTo is the object (or section) the policy is attached to.
	AttachedTo ObjectReference `json:"attachedTo"`
	// Stanza is Defaults, Overrides, or "" for Direct policies.
	Stanza Stanza `json:"stanza"`
	// MergeStrategy is the strategy this entry dictates when it is established.
	MergeStrategy MergeStrategy `json:"mergeStrategy"`
	// Outcome over the contexts of the target this entry takes part in.
	Outcome Outcome `json:"outcome"`
	// Message says why, naming the policies that beat this one.
	// +optional
	Message string `json:"message,omitempty"`
}

// ObjectReference names an object in the hierarchy, or a section of one.
type ObjectReference struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	SectionName string `json:"sectionName,omitempty"`
}

// EffectiveSpec is the merged spec of one policy kind in one context.
type EffectiveSpec struct {
	// Via lists the attachment points merged in this context, least specific first.
	// +listType=atomic
	Via []ObjectReference `json:"via"`
	// SectionName is set when the entry applies to one section of the target.
	// +optional
	SectionName string `json:"sectionName,omitempty"`
	// Spec is the merged spec proper. For a kind whose policies all apply
	// (Envoy Gateway's EnvoyPatchPolicy, Istio's AuthorizationPolicy, ...) it
	// is a JSON list instead: item i is the spec of the i-th policy in the
	// order the implementation applies or evaluates them.
	// +kubebuilder:pruning:PreserveUnknownFields
	Spec runtime.RawExtension `json:"spec"`
	// FieldSources maps the JSON pointer of every leaf of Spec to the policy
	// ("namespace/name", or "name" when cluster-scoped) whose value survived;
	// for a list, "/<i>" to the policy of item i.
	// +optional
	FieldSources map[string]string `json:"fieldSources,omitempty"`
}
