package compute

// The semantics names a descriptor gives (docs/spec.md §4.1), as the engine's API has always named
// them. The Profile interface is in pkg/compute/semantics, each profile in a folder of its
// own below it (gep, the default, envoygateway, kuadrant, nginx, istio, kgateway), and the table of profiles
// by name in pkg/compute/policies.

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
)

// Semantics names, as descriptors write them.
const (
	SemanticsGEP                = semantics.GEP
	SemanticsEnvoyGateway       = semantics.EnvoyGateway
	SemanticsKuadrant           = semantics.Kuadrant
	SemanticsNGINXGatewayFabric = semantics.NGINXGatewayFabric
	SemanticsIstio              = semantics.Istio
	SemanticsKgateway           = semantics.Kgateway
)
