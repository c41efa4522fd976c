// Package v1alpha1 is version v1alpha1 of the effectivepolicy.dev API group.
//
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +groupName=effectivepolicy.dev
// +k8s:openapi-model-package=dev.effectivepolicy.v1alpha1
package v1alpha1
