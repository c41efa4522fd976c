package policies

// The profiles the engine knows, by the semantics name a descriptor gives (docs/spec.md §4.1): adding
// an implementation is adding its folder under pkg/compute/semantics and a line here; adding a
// kind is a line of its implementation's Descriptors.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics/envoygateway"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics/gatewayapi"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics/gep"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics/istio"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics/kgateway"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics/kuadrant"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics/nginx"
)

var profiles = map[string]semantics.Profile{
	semantics.GEP:                gep.Profile{},
	semantics.GatewayAPI:         gatewayapi.Profile{},
	semantics.EnvoyGateway:       envoygateway.Profile{},
	semantics.Kuadrant:           kuadrant.Profile{},
	semantics.NGINXGatewayFabric: nginx.Profile{},
	semantics.Istio:              istio.Profile{},
	semantics.Kgateway:           kgateway.Profile{},
}

// ProfileOf returns the profile a descriptor names (GEP when it names none).
func ProfileOf(d *Descriptor) semantics.Profile {
	if p, ok := profiles[d.Semantics]; ok {
		return p
	}
	return gep.Profile{}
}

func validSemantics(s string) error {
	if s == "" {
		return nil
	}
	if _, ok := profiles[s]; ok {
		return nil
	}
	names := make([]string, 0, len(profiles))
	for n := range profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return fmt.Errorf("semantics must be one of %s, not %q", strings.Join(names, ", "), s)
}

// BuiltinDescriptors returns the built-in descriptors (docs/spec.md §4.1 list), those of every
// profile, sorted by group and kind. See docs/compute.md for how each maps onto the GEP-713
// strategies.
func BuiltinDescriptors() []Descriptor {
	var ds []Descriptor
	for _, p := range profiles {
		ds = append(ds, p.Descriptors()...)
	}
	sort.Slice(ds, func(i, j int) bool {
		if ds[i].Group != ds[j].Group {
			return ds[i].Group < ds[j].Group
		}
		return ds[i].Kind < ds[j].Kind
	})
	return ds
}
