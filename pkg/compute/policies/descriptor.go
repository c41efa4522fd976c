package policies

import (
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/jsonpointer"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
)

// DescriptorAPIVersion and DescriptorListKind identify a descriptor
// configuration file:
//
//	apiVersion: effectivepolicy.dev/v1alpha1
//	kind: PolicyDescriptorList
//	descriptors:
//	- group: example.com
//	  kind: RetryPolicy
//	  class: Inherited
//	  targetRefs: [spec.targetRefs]
//	  defaults: [spec.defaults]
//	  overrides: [spec.overrides]
//	  strategyField: strategy
//	  strategyValues: {atomic: Atomic, patch: Patch, merge: Patch}
//	  defaultStrategy: Atomic
//	  ignore: [spec.note]
//	  sensitiveFields: [/oidc/clientSecret]
const (
	DescriptorAPIVersion = "effectivepolicy.dev/v1alpha1"
	DescriptorListKind   = "PolicyDescriptorList"
	// DescriptorKind is accepted for a file holding a single descriptor
	// (the descriptor fields at top level, next to apiVersion and kind).
	DescriptorKind = "PolicyDescriptor"
)

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
	// to (docs/spec.md §4.1): GEP (the default: docs/spec.md §5 as written), EnvoyGateway,
	// Kuadrant or NGINXGatewayFabric.
	Semantics string `json:"semantics,omitempty"`
	// SensitiveFields lists JSON pointers (RFC 6901) into the spec proper
	// (the merged spec of an effective entry, e.g. "/oidc/clientSecret");
	// each covers its subtree. The API shows the values there only to
	// callers allowed to get the policy kind in the source policy's
	// namespace (see SensitiveKind and pkg/registry); the engine itself
	// computes with them as with any other field.
	SensitiveFields []string `json:"sensitiveFields,omitempty"`
}

type descriptorFile struct {
	APIVersion  string       `json:"apiVersion"`
	Kind        string       `json:"kind"`
	Descriptors []Descriptor `json:"descriptors,omitempty"`
}

type singleDescriptorFile struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Descriptor `json:",inline"`
}

// LoadDescriptors parses a versioned descriptor configuration file (YAML or
// JSON, see DescriptorAPIVersion).
func LoadDescriptors(data []byte) ([]Descriptor, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("descriptor file: %w", err)
	}
	// An empty document (nothing but comments or white space) adds no
	// descriptors: a mounted ConfigMap that holds no descriptor yet must not
	// keep the server from starting.
	if empty, err := isEmptyYAML(data); err != nil {
		return nil, fmt.Errorf("descriptor file: %w", err)
	} else if empty {
		return nil, nil
	}
	if head.APIVersion != DescriptorAPIVersion {
		return nil, fmt.Errorf("descriptor file: apiVersion %q is not supported (want %q)", head.APIVersion, DescriptorAPIVersion)
	}
	var ds []Descriptor
	switch head.Kind {
	case DescriptorListKind:
		var f descriptorFile
		if err := yaml.UnmarshalStrict(data, &f); err != nil {
			return nil, fmt.Errorf("descriptor file: %w", err)
		}
		ds = f.Descriptors
	case DescriptorKind:
		var f singleDescriptorFile
		if err := yaml.UnmarshalStrict(data, &f); err != nil {
			return nil, fmt.Errorf("descriptor file: %w", err)
		}
		ds = []Descriptor{f.Descriptor}
	default:
		return nil, fmt.Errorf("descriptor file: kind %q is not supported (want %q or %q)", head.Kind, DescriptorListKind, DescriptorKind)
	}
	seen := map[string]int{}
	for i := range ds {
		if err := ds[i].Validate(); err != nil {
			return nil, fmt.Errorf("descriptor file: descriptors[%d]: %w", i, err)
		}
		id := ds[i].Group + "/" + ds[i].Kind
		if j, dup := seen[id]; dup {
			return nil, fmt.Errorf("descriptor file: descriptors[%d]: %s duplicates descriptors[%d]", i, id, j)
		}
		seen[id] = i
	}
	return ds, nil
}

// Validate reports what is wrong with d (nil when nothing is).
func (d *Descriptor) Validate() error {
	if d.Kind == "" {
		return fmt.Errorf("kind is required")
	}
	if d.Class != v1alpha1.ClassDirect && d.Class != v1alpha1.ClassInherited {
		return fmt.Errorf("%s.%s: class must be %q or %q, not %q", d.Kind, d.Group, v1alpha1.ClassDirect, v1alpha1.ClassInherited, d.Class)
	}
	if len(d.TargetRef)+len(d.TargetRefs)+len(d.TargetSelectors) == 0 {
		return fmt.Errorf("%s.%s: at least one of targetRef, targetRefs, targetSelectors is required", d.Kind, d.Group)
	}
	for _, group := range [][]string{d.TargetRef, d.TargetRefs, d.TargetSelectors, d.Defaults, d.Overrides, d.Ignore} {
		for _, p := range group {
			if !strings.HasPrefix(p, "spec.") || strings.Contains(p, "..") || strings.HasSuffix(p, ".") {
				return fmt.Errorf("%s.%s: path %q must be a dotted path below spec (like spec.targetRefs)", d.Kind, d.Group, p)
			}
		}
	}
	for _, p := range d.SensitiveFields {
		if !jsonpointer.Valid(p) {
			return fmt.Errorf("%s.%s: sensitiveFields entry %q must be a JSON pointer into the spec proper (like /oidc/clientSecret)", d.Kind, d.Group, p)
		}
	}
	if err := validSemantics(d.Semantics); err != nil {
		return fmt.Errorf("%s.%s: %w", d.Kind, d.Group, err)
	}
	if strings.Contains(d.StrategyField, ".") {
		return fmt.Errorf("%s.%s: strategyField %q must be a plain field name", d.Kind, d.Group, d.StrategyField)
	}
	for k, v := range d.StrategyValues {
		if v != StrategyAtomic && v != StrategyPatch {
			return fmt.Errorf("%s.%s: strategyValues[%q] must be %q or %q, not %q", d.Kind, d.Group, k, StrategyAtomic, StrategyPatch, v)
		}
	}
	if len(d.StrategyValues) > 0 && d.StrategyField == "" {
		return fmt.Errorf("%s.%s: strategyValues needs strategyField", d.Kind, d.Group)
	}
	switch d.DefaultStrategy {
	case "", StrategyAtomic, StrategyPatch:
	default:
		return fmt.Errorf("%s.%s: defaultStrategy must be %q or %q, not %q", d.Kind, d.Group, StrategyAtomic, StrategyPatch, d.DefaultStrategy)
	}
	return nil
}

// ConventionDescriptor is the descriptor the label fallback (docs/spec.md §4.2) uses.
func ConventionDescriptor(group, kind string, class v1alpha1.PolicyClass) Descriptor {
	return Descriptor{
		Group: group, Kind: kind, Class: class,
		TargetRef:      []string{"spec.targetRef"},
		TargetRefs:     []string{"spec.targetRefs"},
		Defaults:       []string{"spec.defaults", "spec.default"},
		Overrides:      []string{"spec.overrides", "spec.override"},
		StrategyField:  "strategy",
		StrategyValues: map[string]string{"atomic": StrategyAtomic, "patch": StrategyPatch, "merge": StrategyPatch},
	}
}

// BuiltinDescriptors returns the built-in descriptors (docs/spec.md §4.1 list). See
// docs/compute.md for how each maps onto the GEP-713 strategies.
func BuiltinDescriptors() []Descriptor {
	const (
		gw    = "gateway.networking.k8s.io"
		gwx   = "gateway.networking.x-k8s.io"
		eg    = "gateway.envoyproxy.io"
		kuad  = "kuadrant.io"
		nginx = "gateway.nginx.org"
	)
	direct := func(group, kind string, refs, refLists []string) Descriptor {
		return Descriptor{Group: group, Kind: kind, Class: v1alpha1.ClassDirect, TargetRef: refs, TargetRefs: refLists}
	}
	egInherited := func(kind string) Descriptor {
		return Descriptor{
			Group: eg, Kind: kind, Class: v1alpha1.ClassInherited, Semantics: semantics.EnvoyGateway,
			TargetRef:       []string{"spec.targetRef"},
			TargetRefs:      []string{"spec.targetRefs"},
			TargetSelectors: []string{"spec.targetSelectors"},
			DefaultStrategy: StrategyAtomic,
			StrategyField:   "mergeType",
			StrategyValues:  map[string]string{"strategicmerge": StrategyPatch, "jsonmerge": StrategyPatch},
		}
	}
	kuadrant := func(kind string) Descriptor {
		return Descriptor{
			Group: kuad, Kind: kind, Class: v1alpha1.ClassInherited, Semantics: semantics.Kuadrant,
			TargetRef:       []string{"spec.targetRef"},
			TargetRefs:      []string{"spec.targetRefs"},
			Defaults:        []string{"spec.defaults"},
			Overrides:       []string{"spec.overrides"},
			StrategyField:   "strategy",
			StrategyValues:  map[string]string{"atomic": StrategyAtomic, "merge": StrategyPatch},
			DefaultStrategy: StrategyAtomic,
		}
	}
	nginxDirect := func(kind string) Descriptor {
		d := direct(nginx, kind, []string{"spec.targetRef"}, []string{"spec.targetRefs"})
		d.Semantics = semantics.NGINXGatewayFabric
		return d
	}
	ds := []Descriptor{
		direct(gw, "BackendTLSPolicy", nil, []string{"spec.targetRefs"}),
		direct(gwx, "XBackendTrafficPolicy", nil, []string{"spec.targetRefs"}),
		egInherited("BackendTrafficPolicy"),
		{
			Group: eg, Kind: "ClientTrafficPolicy", Class: v1alpha1.ClassDirect, Semantics: semantics.EnvoyGateway,
			TargetRef: []string{"spec.targetRef"}, TargetRefs: []string{"spec.targetRefs"},
			TargetSelectors: []string{"spec.targetSelectors"},
		},
		egInherited("SecurityPolicy"),
		egInherited("EnvoyExtensionPolicy"),
		kuadrant("RateLimitPolicy"),
		kuadrant("AuthPolicy"),
		kuadrant("TokenRateLimitPolicy"),
		direct(kuad, "DNSPolicy", []string{"spec.targetRef"}, []string{"spec.targetRefs"}),
		direct(kuad, "TLSPolicy", []string{"spec.targetRef"}, []string{"spec.targetRefs"}),
		{
			Group: nginx, Kind: "ClientSettingsPolicy", Class: v1alpha1.ClassInherited, Semantics: semantics.NGINXGatewayFabric,
			TargetRef: []string{"spec.targetRef"}, TargetRefs: []string{"spec.targetRefs"},
			DefaultStrategy: StrategyPatch,
		},
		nginxDirect("ObservabilityPolicy"),
		nginxDirect("UpstreamSettingsPolicy"),
	}
	sort.Slice(ds, func(i, j int) bool {
		if ds[i].Group != ds[j].Group {
			return ds[i].Group < ds[j].Group
		}
		return ds[i].Kind < ds[j].Kind
	})
	return ds
}

// isEmptyYAML reports whether data holds no YAML value at all (only comments
// and white space), as opposed to a document with fields.
func isEmptyYAML(data []byte) (bool, error) {
	var v interface{}
	if err := yaml.Unmarshal(data, &v); err != nil {
		return false, err
	}
	return v == nil, nil
}
