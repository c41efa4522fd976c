package check

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// Target is an object a rule is checked on.
type Target struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// String is the target as the output names it: Kind namespace/name.
func (t Target) String() string {
	if t.Namespace == "" {
		return t.Kind + " " + t.Name
	}
	return t.Kind + " " + t.Namespace + "/" + t.Name
}

func (t Target) less(o Target) bool {
	if t.Namespace != o.Namespace {
		return t.Namespace < o.Namespace
	}
	if t.Name != o.Name {
		return t.Name < o.Name
	}
	if t.Group != o.Group {
		return t.Group < o.Group
	}
	return t.Kind < o.Kind
}

// Object is an object that may be a target, with its labels.
type Object struct {
	Target
	Labels map[string]string
}

// Reached is a target that policies reach, and what reaches it: an entry
// of an EffectivePolicy (Namespace "" for a ClusterEffectivePolicy).
type Reached struct {
	Namespace string
	Target    v1alpha1.Target
}

// Source is what the expectations are evaluated over. Its errors mean the
// expectations could not be evaluated.
type Source interface {
	// Effective lists the targets that policies reach in namespace; ""
	// lists every namespace and the cluster-scoped targets.
	Effective(ctx context.Context, namespace string) ([]Reached, error)
	// Objects lists the objects of kind (in group; nil: any group) in
	// namespace ("" every namespace); served=false when no API serves the
	// kind (its targets are virtual: only Effective knows them).
	Objects(ctx context.Context, group *string, kind, namespace string) (objs []Object, served bool, err error)
	// Attached lists the routes attached to the Gateway (to its listener
	// when gw names a section); ok=false when there is no such Gateway.
	Attached(ctx context.Context, gw GatewayRef) (routes []Object, ok bool, err error)
}

// Result is one expectation on one target.
type Result struct {
	Expectation string `json:"expectation"`
	File        string `json:"file"`
	Line        int    `json:"line"`
	// Target is nil when the expectation picked no target.
	Target   *Target  `json:"target,omitempty"`
	Holds    bool     `json:"holds"`
	Failures []string `json:"failures,omitempty"`
}

// Report is the results of every expectation, in file order, targets
// sorted.
type Report struct {
	Results []Result `json:"results"`
}

// Holds reports whether every result holds.
func (r Report) Holds() bool {
	for _, res := range r.Results {
		if !res.Holds {
			return false
		}
	}
	return true
}

// Evaluate checks every expectation of docs over src. An error means they
// could not be evaluated (the source failed).
func Evaluate(ctx context.Context, src Source, docs []*Expectations) (Report, error) {
	ev := &evaluator{src: src, effective: map[string][]Reached{}}
	var rep Report
	for _, doc := range docs {
		for i := range doc.Expectations {
			got, err := ev.expectation(ctx, doc.File, &doc.Expectations[i])
			if err != nil {
				return Report{}, fmt.Errorf("%s:%d: expectation %q: %w", doc.File, doc.Expectations[i].Line, doc.Expectations[i].Name, err)
			}
			rep.Results = append(rep.Results, got...)
		}
	}
	return rep, nil
}

type evaluator struct {
	src       Source
	effective map[string][]Reached // by namespace asked
}

func (ev *evaluator) reached(ctx context.Context, namespace string) ([]Reached, error) {
	if r, ok := ev.effective[namespace]; ok {
		return r, nil
	}
	r, err := ev.src.Effective(ctx, namespace)
	if err != nil {
		return nil, err
	}
	ev.effective[namespace] = r
	return r, nil
}

func (ev *evaluator) expectation(ctx context.Context, file string, e *Expectation) ([]Result, error) {
	base := Result{Expectation: e.Name, File: file, Line: e.Line}
	targets, why, err := ev.targets(ctx, &e.Targets)
	if err != nil {
		return nil, err
	}
	if why != "" {
		base.Failures = []string{why}
		return []Result{base}, nil
	}
	reached, err := ev.reached(ctx, e.Targets.Namespace)
	if err != nil {
		return nil, err
	}
	policies := map[Target][]v1alpha1.TargetPolicy{}
	for _, r := range reached {
		t := Target{Group: r.Target.Group, Kind: r.Target.Kind, Namespace: r.Namespace, Name: r.Target.Name}
		policies[t] = r.Target.Policies
	}
	out := make([]Result, 0, len(targets))
	for _, t := range targets {
		res := base
		res.Target = &t
		res.Failures = checkTarget(e, policies[t])
		res.Holds = len(res.Failures) == 0
		out = append(out, res)
	}
	return out, nil
}

// targets lists the targets sel picks, sorted; why says why there are
// none (a failure of the expectation: a typo must not pass).
func (ev *evaluator) targets(ctx context.Context, sel *TargetSelector) ([]Target, string, error) {
	var objs []Object
	switch {
	case sel.AttachedTo != nil:
		routes, ok, err := ev.src.Attached(ctx, *sel.AttachedTo)
		if err != nil {
			return nil, "", err
		}
		if !ok {
			return nil, fmt.Sprintf("there is no Gateway %s/%s", sel.AttachedTo.Namespace, sel.AttachedTo.Name), nil
		}
		objs = routes
	case sel.Kind != "":
		got, _, err := ev.src.Objects(ctx, sel.Group, sel.Kind, sel.Namespace)
		if err != nil {
			return nil, "", err
		}
		objs = got
		fallthrough
	default:
		// Virtual targets exist only as EffectivePolicies; listing them
		// too costs nothing for the others (they are found twice).
		reached, err := ev.reached(ctx, sel.Namespace)
		if err != nil {
			return nil, "", err
		}
		for _, r := range reached {
			objs = append(objs, Object{Target: Target{Group: r.Target.Group, Kind: r.Target.Kind, Namespace: r.Namespace, Name: r.Target.Name}})
		}
	}
	seen := map[Target]bool{}
	var out []Target
	for _, o := range objs {
		if !seen[o.Target] && sel.picks(o) {
			seen[o.Target] = true
			out = append(out, o.Target)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].less(out[j]) })
	if len(out) == 0 && !sel.everything() {
		return nil, "no target matches " + sel.String(), nil
	}
	return out, "", nil
}

// picks reports whether sel picks o.
func (sel *TargetSelector) picks(o Object) bool {
	switch {
	case sel.Group != nil && *sel.Group != o.Group,
		sel.Kind != "" && sel.Kind != o.Kind,
		sel.Namespace != "" && sel.Namespace != o.Namespace,
		sel.Name != "" && sel.Name != o.Name,
		sel.labels != nil && !sel.labels.Matches(labels.Set(o.Labels)):
		return false
	}
	return true
}

// everything reports whether sel picks every target.
func (sel *TargetSelector) everything() bool {
	return sel.Group == nil && sel.Kind == "" && sel.Namespace == "" && sel.Name == "" && sel.Selector == nil && sel.AttachedTo == nil
}

// String says what sel picks, for the output.
func (sel *TargetSelector) String() string {
	var parts []string
	kind := sel.Kind
	if kind == "" {
		kind = "any kind"
	}
	if sel.Group != nil && *sel.Group != "" {
		kind += "." + *sel.Group
	}
	parts = append(parts, kind)
	if sel.Namespace != "" {
		parts = append(parts, "in namespace "+sel.Namespace)
	}
	if sel.Name != "" {
		parts = append(parts, "named "+sel.Name)
	}
	if sel.labels != nil {
		parts = append(parts, "with labels "+sel.labels.String())
	}
	if a := sel.AttachedTo; a != nil {
		at := "attached to Gateway " + a.Namespace + "/" + a.Name
		if a.SectionName != "" {
			at += " listener " + a.SectionName
		}
		parts = append(parts, at)
	}
	return strings.Join(parts, " ")
}
