package compute

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/policies"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The descriptors of policy kinds are read and checked in pkg/compute/policies; the engine's
// API names them here as it always has.

// Descriptor describes one policy kind (docs/spec.md §4); see policies.Descriptor.
type Descriptor = policies.Descriptor

// Descriptor configuration files and strategy names; see pkg/compute/policies.
const (
	DescriptorAPIVersion = policies.DescriptorAPIVersion
	DescriptorListKind   = policies.DescriptorListKind
	DescriptorKind       = policies.DescriptorKind
	StrategyAtomic       = policies.StrategyAtomic
	StrategyPatch        = policies.StrategyPatch
)

// MaxSpecDepth bounds how deeply a policy's spec may nest (objects and lists); a deeper policy
// is Invalid (policies.MaxSpecDepth says why).
const MaxSpecDepth = policies.MaxSpecDepth

// LoadDescriptors reads a descriptor configuration file (policies.LoadDescriptors).
func LoadDescriptors(data []byte) ([]Descriptor, error) { return policies.LoadDescriptors(data) }

// ValidateDescriptor reports what is wrong with descriptor d (policies.Validate).
func ValidateDescriptor(d *Descriptor) error { return policies.Validate(d) }

// BuiltinDescriptors returns the descriptors of the built-in policy kinds
// (policies.BuiltinDescriptors).
func BuiltinDescriptors() []Descriptor { return policies.BuiltinDescriptors() }

// SensitiveKind is what the API layer needs to redact the sensitive fields
// of one policy kind: the resource to authorize "get" on, and the pointers.
type SensitiveKind struct {
	Resource   schema.GroupResource
	Namespaced bool
	// Paths are the descriptor's SensitiveFields.
	Paths []string
}

// SensitiveKind returns the sensitive fields of policy kind gk, from its
// descriptor and its CRD; ok=false when gk is not a known policy kind or
// declares no sensitive fields.
func (e *Engine) SensitiveKind(gk schema.GroupKind) (SensitiveKind, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	ki := e.st.att.Kind(gk)
	if ki == nil || ki.Kind == nil || len(ki.Kind.Descriptor.SensitiveFields) == 0 {
		return SensitiveKind{}, false
	}
	return SensitiveKind{
		Resource:   ki.Kind.GVR.GroupResource(),
		Namespaced: ki.Kind.Namespaced,
		Paths:      append([]string(nil), ki.Kind.Descriptor.SensitiveFields...),
	}, true
}
