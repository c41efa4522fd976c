package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// +genclient
// +genclient:nonNamespaced
// +genclient:onlyVerbs=create
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// EffectivePolicyReview asks what a proposed change would do (docs/spec.md §10):
// which EffectivePolicies and ClusterEffectivePolicies would be added,
// modified or deleted if the objects of spec were applied and deleted. Like
// a SubjectAccessReview it is only created, never stored, and the live
// state is not touched: the answer is the returned object's status.
type EffectivePolicyReview struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the proposed change.
	Spec EffectivePolicyReviewSpec `json:"spec"`
	// Status is the answer, filled in by the server.
	// +optional
	Status EffectivePolicyReviewStatus `json:"status,omitempty"`
}

// EffectivePolicyReviewSpec is a proposed change.
type EffectivePolicyReviewSpec struct {
	// Apply lists objects as they would be applied: policies, routes,
	// Gateways, ListenerSets, Services, ReferenceGrants, Namespaces,
	// GatewayClasses. An object that exists keeps its creationTimestamp; a
	// new one is the newest of all.
	// +optional
	// +listType=atomic
	Apply []runtime.RawExtension `json:"apply,omitempty"`
	// Delete lists objects as they would be deleted.
	// +optional
	// +listType=atomic
	Delete []ReviewObjectReference `json:"delete,omitempty"`
}

// ReviewObjectReference names an object to delete.
type ReviewObjectReference struct {
	// Group of the object's kind ("" for the core group).
	Group string `json:"group"`
	Kind  string `json:"kind"`
	// Namespace is empty for a cluster-scoped object.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// ChangeType says what would happen to an EffectivePolicy.
type ChangeType string

// Change types.
const (
	ChangeAdded    ChangeType = "Added"
	ChangeModified ChangeType = "Modified"
	ChangeDeleted  ChangeType = "Deleted"
)

// EffectivePolicyReviewStatus is the answer to an EffectivePolicyReview.
type EffectivePolicyReviewStatus struct {
	// Changes lists the EffectivePolicies and ClusterEffectivePolicies the
	// change would add, modify or delete, sorted by resource, namespace and
	// name.
	// +optional
	// +listType=atomic
	Changes []EffectivePolicyChange `json:"changes,omitempty"`
	// HiddenChanges counts the changes in namespaces where the caller may
	// not get effectivepolicies (and, for ClusterEffectivePolicies, when
	// she may not get clustereffectivepolicies): they are not named.
	// +optional
	HiddenChanges int32 `json:"hiddenChanges,omitempty"`
}

// EffectivePolicyChange is what would happen to one EffectivePolicy or
// ClusterEffectivePolicy.
type EffectivePolicyChange struct {
	// Resource is effectivepolicies or clustereffectivepolicies.
	Resource string `json:"resource"`
	// Namespace is empty for a ClusterEffectivePolicy.
	// +optional
	Namespace string     `json:"namespace,omitempty"`
	Name      string     `json:"name"`
	Change    ChangeType `json:"change"`
	// Before holds the targets as they are now (none when Added).
	Before ReviewTargets `json:"before"`
	// After holds the targets as they would be (none when Deleted).
	After ReviewTargets `json:"after"`
}

// ReviewTargets are the targets of an EffectivePolicy, before or after.
type ReviewTargets struct {
	// +optional
	// +listType=atomic
	Targets []Target `json:"targets,omitempty"`
}
