// Package check evaluates expectations about effective policies — which
// policy kinds must reach which targets, with which outcome, with which
// effective settings — for kubectl effectivepolicy check (docs/check.md).
// The expectations are a YAML document of their own kind (Expectations),
// read with line numbers so that a mistake is reported where it is; they
// are evaluated over what a Source gives: the cluster's EffectivePolicies
// and objects (online) or those computed from manifests (offline).
package check

import (
	"k8s.io/apimachinery/pkg/labels"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// APIVersion and Kind of an expectations document. The group is the
// API's own: the document is read by the plugin only, never served.
const (
	APIVersion = "effectivepolicy.dev/v1alpha1"
	Kind       = "Expectations"
)

// Expectations is one expectations document.
type Expectations struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Expectations []Expectation `yaml:"expectations"`

	// File is where the document was read.
	File string `yaml:"-"`
}

// Expectation is one rule: for every target the selector picks, what must
// hold.
type Expectation struct {
	// Name says what the rule is for; it names the rule in the output.
	Name string `yaml:"name"`
	// Targets picks the targets.
	Targets TargetSelector `yaml:"targets"`
	// Policy is the policy kind the rule is about; nil: every policy kind
	// that reaches the target (forbiddenOutcomes and allowAssumedSemantics
	// only).
	Policy *PolicyRule `yaml:"policy"`
	// ForbiddenOutcomes: no source of the kind (of any kind without
	// policy) may have one of these outcomes.
	ForbiddenOutcomes []v1alpha1.Outcome `yaml:"forbiddenOutcomes"`
	// AllowAssumedSemantics false: the kind (any kind without policy) must
	// not be computed with assumed semantics. Default true.
	AllowAssumedSemantics *bool `yaml:"allowAssumedSemantics"`

	// Line is the line of the rule in its file.
	Line int `yaml:"-"`
}

// TargetSelector picks targets. Every field given must match.
type TargetSelector struct {
	// Group of the targets; nil matches the kind in any group.
	Group *string `yaml:"group"`
	// Kind of the targets; "" matches every kind a policy reaches.
	Kind string `yaml:"kind"`
	// Namespace of the targets; "" matches every namespace.
	Namespace string `yaml:"namespace"`
	// Name of the target.
	Name string `yaml:"name"`
	// Selector matches the targets' labels (needs kind).
	Selector *LabelSelector `yaml:"selector"`
	// AttachedTo keeps the routes attached to a Gateway, or to one of its
	// listeners.
	AttachedTo *GatewayRef `yaml:"attachedTo"`

	labels labels.Selector // Selector compiled (nil: none)
}

// LabelSelector is Kubernetes' label selector (metav1.LabelSelector),
// spelled as in a manifest.
type LabelSelector struct {
	MatchLabels      map[string]string          `yaml:"matchLabels"`
	MatchExpressions []LabelSelectorRequirement `yaml:"matchExpressions"`
}

// LabelSelectorRequirement is one of matchExpressions.
type LabelSelectorRequirement struct {
	Key      string   `yaml:"key"`
	Operator string   `yaml:"operator"`
	Values   []string `yaml:"values"`
}

// GatewayRef names a Gateway, or a listener of it.
type GatewayRef struct {
	Namespace   string `yaml:"namespace"`
	Name        string `yaml:"name"`
	SectionName string `yaml:"sectionName"`
}

// PolicyRule is what a policy kind must do to each target.
type PolicyRule struct {
	// Group of the policy kind; "" matches the kind in any group.
	Group string `yaml:"group"`
	// Kind of the policy kind.
	Kind string `yaml:"kind"`
	// Optional: a target the kind does not reach passes; otherwise the
	// kind must reach every target.
	Optional bool `yaml:"optional"`
	// Outcomes: some source of the kind must have one of these; default
	// Enforced or PartiallyEnforced (something of it takes effect).
	Outcomes []v1alpha1.Outcome `yaml:"outcomes"`
	// Fields must hold in every effective entry of the kind.
	Fields []FieldRule `yaml:"fields"`
}

// FieldRule is what one field of the effective spec must be.
type FieldRule struct {
	// Path is a JSON pointer (/timeout/request) or a dotted path
	// (timeout.request; a number is a list index).
	Path string `yaml:"path"`
	// Exists true: the field must be set; false: it must not be.
	Exists *bool `yaml:"exists"`
	// Equals: the field must be this value (any YAML value).
	Equals interface{} `yaml:"equals"`
	// Max and Min bound a number, or a duration ("30s", "1m30s").
	Max interface{} `yaml:"max"`
	Min interface{} `yaml:"min"`
	// Optional: when the field is not set, equals, max and min hold.
	Optional bool `yaml:"optional"`

	hasEquals bool
	tokens    []string // of Path
	max, min  bound
	line      int
}
