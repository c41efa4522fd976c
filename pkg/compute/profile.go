package compute

// The profiles the engine knows, by the semantics name a descriptor gives (SPEC §4.1). The
// Profile interface is in pkg/compute/semantics; each profile lives in a folder of its own
// below it: gep (SPEC §5 as written, the default), envoygateway, kuadrant, nginx.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics/envoygateway"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics/gep"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics/kuadrant"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics/nginx"
)

// Semantics names, as descriptors write them.
const (
	SemanticsGEP                = semantics.GEP
	SemanticsEnvoyGateway       = semantics.EnvoyGateway
	SemanticsKuadrant           = semantics.Kuadrant
	SemanticsNGINXGatewayFabric = semantics.NGINXGatewayFabric
)

var profiles = map[string]semantics.Profile{
	SemanticsGEP:                gep.Profile{},
	SemanticsEnvoyGateway:       envoygateway.Profile{},
	SemanticsKuadrant:           kuadrant.Profile{},
	SemanticsNGINXGatewayFabric: nginx.Profile{},
}

// profileOf returns the profile a descriptor names (GEP when it names none).
func profileOf(d *Descriptor) semantics.Profile {
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
