package policies

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
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
	StrategyAtomic = semantics.StrategyAtomic
	StrategyPatch  = semantics.StrategyPatch
)

// Descriptor describes one policy kind (docs/spec.md §4); each implementation's folder under
// pkg/compute/semantics declares its kinds' descriptors beside its profile.
type Descriptor = semantics.Descriptor

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
		if err := Validate(&ds[i]); err != nil {
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

// Validate reports what is wrong with descriptor d (nil when nothing is).
func Validate(d *Descriptor) error {
	if d.Kind == "" {
		return fmt.Errorf("kind is required")
	}
	for _, check := range []func(*Descriptor) error{validateTargets, validateFields, validateStrategy} {
		if err := check(d); err != nil {
			return fmt.Errorf("%s.%s: %w", d.Kind, d.Group, err)
		}
	}
	return nil
}

// validateTargets checks the class and where a policy's targets are.
func validateTargets(d *Descriptor) error {
	if d.Class != v1alpha1.ClassDirect && d.Class != v1alpha1.ClassInherited {
		return fmt.Errorf("class must be %q or %q, not %q", v1alpha1.ClassDirect, v1alpha1.ClassInherited, d.Class)
	}
	if len(d.TargetRef)+len(d.TargetRefs)+len(d.TargetSelectors)+len(d.WorkloadSelectors) == 0 && d.UntargetedScope == "" {
		return fmt.Errorf("at least one of targetRef, targetRefs, targetSelectors, workloadSelectors, untargetedScope is required")
	}
	if d.UntargetedScope != "" && d.UntargetedScope != semantics.ScopeNamespace {
		return fmt.Errorf("untargetedScope must be %q or empty, not %q", semantics.ScopeNamespace, d.UntargetedScope)
	}
	for i, tk := range d.TargetKinds {
		if tk.Kind == "" {
			return fmt.Errorf("targetKinds[%d]: kind is required", i)
		}
	}
	return nil
}

// validateFields checks the paths, pointers, annotation keys and semantics name.
func validateFields(d *Descriptor) error {
	for _, group := range [][]string{d.TargetRef, d.TargetRefs, d.TargetSelectors, d.WorkloadSelectors, d.Defaults, d.Overrides, d.Ignore} {
		for _, p := range group {
			if !strings.HasPrefix(p, "spec.") || strings.Contains(p, "..") || strings.HasSuffix(p, ".") {
				return fmt.Errorf("path %q must be a dotted path below spec (like spec.targetRefs)", p)
			}
		}
	}
	for _, p := range d.SensitiveFields {
		if !jsonpointer.Valid(p) {
			return fmt.Errorf("sensitiveFields entry %q must be a JSON pointer into the spec proper (like /oidc/clientSecret)", p)
		}
	}
	for _, a := range d.Annotations {
		if errs := validation.IsQualifiedName(a); len(errs) > 0 {
			return fmt.Errorf("annotations entry %q is not an annotation key: %s", a, strings.Join(errs, "; "))
		}
	}
	return validSemantics(d.Semantics)
}

// validateStrategy checks how a policy names its strategy and the default.
func validateStrategy(d *Descriptor) error {
	if strings.Contains(d.StrategyField, ".") {
		return fmt.Errorf("strategyField %q must be a plain field name", d.StrategyField)
	}
	for k, v := range d.StrategyValues {
		if v != StrategyAtomic && v != StrategyPatch {
			return fmt.Errorf("strategyValues[%q] must be %q or %q, not %q", k, StrategyAtomic, StrategyPatch, v)
		}
	}
	if len(d.StrategyValues) > 0 && d.StrategyField == "" {
		return fmt.Errorf("strategyValues needs strategyField")
	}
	switch d.DefaultStrategy {
	case "", StrategyAtomic, StrategyPatch:
	default:
		return fmt.Errorf("defaultStrategy must be %q or %q, not %q", StrategyAtomic, StrategyPatch, d.DefaultStrategy)
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

// isEmptyYAML reports whether data holds no YAML value at all (only comments
// and white space), as opposed to a document with fields.
func isEmptyYAML(data []byte) (bool, error) {
	var v interface{}
	if err := yaml.Unmarshal(data, &v); err != nil {
		return false, err
	}
	return v == nil, nil
}
