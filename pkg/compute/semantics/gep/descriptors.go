package gep

import "github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"

// Descriptors (semantics.Profile): the GEP profile belongs to no implementation and declares no kind.
func (Profile) Descriptors() []semantics.Descriptor { return nil }
