package semantics

// Descriptor is the data of a descriptor (docs/spec.md §4.1); pkg/compute/policies reads and checks descriptor files.
// It lives here so that each implementation's folder can declare its own kinds beside its profile.

import "github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"

// Strategy names used in descriptors (the stanza decides Defaults/Overrides).
const (
	StrategyAtomic = "Atomic"
	StrategyPatch  = "Patch"
)

// Descriptor describes one policy kind (docs/spec.md §4). Paths are dotted field
// paths starting at "spec" (for example "spec.targetRefs").
type Descriptor struct {
	// Group and Kind of the policy kind.
	Group string `json:"group"`
	Kind  string `json:"kind"`
	// Class is Direct or Inherited.
	Class v1alpha1.PolicyClass `json:"class"`
	// TargetRef lists paths of single target references
	// ({group, kind, name, namespace?, sectionName?}).
	TargetRef []string `json:"targetRef,omitempty"`
	// TargetRefs lists paths of lists of target references; an entry may
	// carry a label "selector" instead of a name (GEP-713 selector targets).
	TargetRefs []string `json:"targetRefs,omitempty"`
	// TargetSelectors lists paths of lists of Envoy Gateway style selectors
	// ({group, kind, matchLabels, matchExpressions}).
	TargetSelectors []string `json:"targetSelectors,omitempty"`
	// WorkloadSelectors lists paths of Istio style workload selectors ({matchLabels}, or
	// EnvoyFilter's {labels}). A
	// policy without targetRefs that sets one selects the Gateways of its namespace whose pods
	// carry the labels (GatewayPodLabels: gateway.networking.k8s.io/gateway-name: <its name>
	// and the other labels Istio's deployment template sets); other pod labels are not known
	// here, so a selector that asks for one selects no Gateway.
	WorkloadSelectors []string `json:"workloadSelectors,omitempty"`
	// RootSelectorsMeshWide makes a workload selector of a policy in its profile's root
	// namespace (MeshRoot) select the matching Gateways of every namespace, with no
	// ReferenceGrant: Istio looks up a workload's policies in the root namespace and the
	// workload's, and matches the selector alone. Off, such a selector selects in the
	// policy's namespace only (Istio's Telemetry).
	RootSelectorsMeshWide bool `json:"rootSelectorsMeshWide,omitempty"`
	// UntargetedScope, when Namespace, makes a policy that names no target (no targetRef(s),
	// no selector) apply to its whole namespace: it is attached to its Namespace node.
	// Empty keeps such a policy Invalid ("the policy names no target").
	UntargetedScope string `json:"untargetedScope,omitempty"`
	// TargetKinds, when set, are the only kinds a policy may target (its implementation
	// rejects a policy that names another, so it is Invalid).
	TargetKinds []TargetKind `json:"targetKinds,omitempty"`
	// Defaults and Overrides list the paths of the stanzas; the first one
	// present in a policy is used.
	Defaults  []string `json:"defaults,omitempty"`
	Overrides []string `json:"overrides,omitempty"`
	// NoImplicitDefaults makes spec fields outside the stanzas be ignored
	// instead of treated as defaults.
	NoImplicitDefaults bool `json:"noImplicitDefaults,omitempty"`
	// StrategyField is the name of the field, read at spec level and at
	// stanza level (the stanza wins), that names a policy's strategy.
	StrategyField string `json:"strategyField,omitempty"`
	// StrategyValues maps the (case-insensitive) values of StrategyField to
	// Atomic or Patch. Any other value makes the policy Invalid.
	StrategyValues map[string]string `json:"strategyValues,omitempty"`
	// DefaultStrategy (Atomic or Patch) applies when a policy names none;
	// empty means the engine default (docs/spec.md §5, last paragraph).
	DefaultStrategy string `json:"defaultStrategy,omitempty"`
	// Ignore lists paths that are not "spec proper"; they are removed from
	// the merged spec.
	Ignore []string `json:"ignore,omitempty"`
	// Semantics names whose rules decide what policies of this kind add up
	// to (docs/spec.md §4.1): GEP (the default: docs/spec.md §5 as written), GatewayAPI,
	// EnvoyGateway, Kuadrant, NGINXGatewayFabric or Istio.
	Semantics string `json:"semantics,omitempty"`
	// Annotations lists annotations of a policy object that its profile reads (kgateway's
	// policy weight): the engine keeps them beside the spec, in the policy's Raw under
	// metadata.annotations, and recomputes when one of them changes. Other annotations are
	// never kept.
	Annotations []string `json:"annotations,omitempty"`
	// SensitiveFields lists JSON pointers (RFC 6901) into the spec proper
	// (the merged spec of an effective entry, e.g. "/oidc/clientSecret");
	// each covers its subtree. The API shows the values there only to
	// callers allowed to get the policy kind in the source policy's
	// namespace (see SensitiveKind and pkg/registry); the engine itself
	// computes with them as with any other field.
	SensitiveFields []string `json:"sensitiveFields,omitempty"`
}

// ScopeNamespace is the UntargetedScope of a kind whose untargeted policies apply to their
// namespace.
const ScopeNamespace = "Namespace"

// GatewayNameLabel is the label Istio's deployment controller puts on a Gateway's pods,
// naming the Gateway.
const GatewayNameLabel = "gateway.networking.k8s.io/gateway-name"

// GatewayPodLabels are the labels of the pods of Gateway name of GatewayClass class ("" when
// unknown) whose own labels are own, as Istio's deployment controller sets them
// (pilot/pkg/config/kube/gatewaycommon/deploymentcontroller.go, rendering
// manifests/charts/istio-control/istio-discovery/files/kube-gateway.yaml, whose toJsonMap lets
// later maps win): the template's labels (the deployment is named <name>-<class> unless
// annotated otherwise), then the Gateway's own labels (its InfrastructureLabels:
// extractInfrastructureMetadata copies them, PILOT_ENABLE_GATEWAY_API_COPY_LABELS_ANNOTATIONS
// being on by default), then the gateway name, class and managed labels. spec.infrastructure.labels,
// which Istio takes instead of the Gateway's own when set, are not known here.
func GatewayPodLabels(name, class string, own map[string]string) map[string]string {
	l := map[string]string{
		"sidecar.istio.io/inject":             "false",
		"service.istio.io/canonical-revision": "latest",
	}
	if class != "" {
		l["service.istio.io/canonical-name"] = name + "-" + class
	}
	for k, v := range own {
		l[k] = v
	}
	l[GatewayNameLabel] = name
	l["gateway.istio.io/managed"] = "istio.io-gateway-controller"
	if class != "" {
		l["gateway.networking.k8s.io/gateway-class-name"] = class
	}
	return l
}

// TargetKind is a kind a policy may target ("" group for the core group).
type TargetKind struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
}

// Allows reports whether a policy of d may target an object of group and kind.
func (d *Descriptor) Allows(group, kind string) bool {
	if len(d.TargetKinds) == 0 {
		return true
	}
	for _, tk := range d.TargetKinds {
		if tk.Group == group && tk.Kind == kind {
			return true
		}
	}
	return false
}

// TargetKindsText names d's target kinds for messages ("Gateway.gateway.networking.k8s.io, Service").
func (d *Descriptor) TargetKindsText() string {
	var b []byte
	for i, tk := range d.TargetKinds {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, tk.Kind...)
		if tk.Group != "" {
			b = append(b, '.')
			b = append(b, tk.Group...)
		}
	}
	return string(b)
}
