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
//
// Every GET asks this of each policy kind in its answer, so it does not take
// the engine's lock: it reads an index rebuilt when the policy kinds change
// (refreshSensitive), which a review holding the write lock for up to
// --review-timeout cannot change (CRDs cannot be proposed).
func (e *Engine) SensitiveKind(gk schema.GroupKind) (SensitiveKind, bool) {
	sk, ok := e.sensitive.Load().kinds[gk] // NewEngine stores the first
	if !ok {
		return SensitiveKind{}, false
	}
	sk.Paths = append([]string(nil), sk.Paths...)
	return sk, true
}

// sensitiveIndex is the sensitive fields of every policy kind that declares
// some, as of the policy kinds' generation gen.
type sensitiveIndex struct {
	gen   uint64
	kinds map[schema.GroupKind]SensitiveKind
}

// sensitiveIndex builds the index of the current policy kinds. The caller
// holds e.mu.
func (st *state) sensitiveIndex() *sensitiveIndex {
	idx := &sensitiveIndex{gen: st.kindsGen, kinds: map[schema.GroupKind]SensitiveKind{}}
	for gk, ki := range st.att.Kinds() {
		if ki == nil || ki.Kind == nil || len(ki.Kind.Descriptor.SensitiveFields) == 0 {
			continue
		}
		idx.kinds[gk] = SensitiveKind{
			Resource:   ki.Kind.GVR.GroupResource(),
			Namespaced: ki.Kind.Namespaced,
			Paths:      append([]string(nil), ki.Kind.Descriptor.SensitiveFields...),
		}
	}
	return idx
}

// refreshSensitive rebuilds the index of sensitive fields if the policy
// kinds changed since it was built. The caller holds e.mu (write).
func (e *Engine) refreshSensitive() {
	if idx := e.sensitive.Load(); idx != nil && idx.gen == e.st.kindsGen {
		return
	}
	e.sensitive.Store(e.st.sensitiveIndex())
}
