package check

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/jsonpointer"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

var outcomes = []v1alpha1.Outcome{
	v1alpha1.OutcomeEnforced, v1alpha1.OutcomePartiallyEnforced, v1alpha1.OutcomeOverridden,
	v1alpha1.OutcomeConflicted, v1alpha1.OutcomeInvalid,
}

// routeKinds are the kinds attachedTo can pick.
var routeKinds = []string{"HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute"}

// validate checks what decoding cannot, with the lines of doc's node n,
// and fills in what evaluation needs (lines, selectors, paths).
func validate(doc *Expectations, n *yaml.Node) error {
	fail := func(line int, format string, args ...interface{}) error {
		return &Error{File: doc.File, Line: line, Reason: fmt.Sprintf(format, args...)}
	}
	if len(doc.Expectations) == 0 {
		return fail(keyLine(n, "expectations"), "no expectations: list them under expectations")
	}
	names := map[string]int{}
	for i := range doc.Expectations {
		e := &doc.Expectations[i]
		en := item(n, "expectations", i)
		e.Line = en.Line
		if e.Name == "" {
			return fail(e.Line, "expectation %d has no name", i+1)
		}
		if l, dup := names[e.Name]; dup {
			return fail(keyLine(en, "name"), "expectation %q is named twice (first on line %d)", e.Name, l)
		}
		names[e.Name] = e.Line
		if err := validateExpectation(e, en, fail); err != nil {
			return err
		}
	}
	return nil
}

type failFunc func(line int, format string, args ...interface{}) error

func validateExpectation(e *Expectation, n *yaml.Node, fail failFunc) error {
	if err := validateTargets(&e.Targets, value(n, "targets"), n, fail); err != nil {
		return err
	}
	if err := validateOutcomes(e.ForbiddenOutcomes, keyLine(n, "forbiddenOutcomes"), fail); err != nil {
		return err
	}
	if e.Policy == nil && len(e.ForbiddenOutcomes) == 0 && (e.AllowAssumedSemantics == nil || *e.AllowAssumedSemantics) {
		return fail(e.Line, "expectation %q says nothing must hold: give policy, forbiddenOutcomes or allowAssumedSemantics: false", e.Name)
	}
	if e.Policy == nil {
		return nil
	}
	pn := value(n, "policy")
	p := e.Policy
	if p.Kind == "" {
		return fail(keyLine(n, "policy"), "policy needs a kind")
	}
	if err := validateOutcomes(p.Outcomes, keyLine(pn, "outcomes"), fail); err != nil {
		return err
	}
	for j := range p.Fields {
		if err := validateField(&p.Fields[j], item(pn, "fields", j), fail); err != nil {
			return err
		}
	}
	return nil
}

func validateOutcomes(os []v1alpha1.Outcome, line int, fail failFunc) error {
	for _, o := range os {
		if !slices.Contains(outcomes, o) {
			return fail(line, "%q is not an outcome: %s", o, joinOutcomes(outcomes))
		}
	}
	return nil
}

func joinOutcomes(os []v1alpha1.Outcome) string {
	s := make([]string, len(os))
	for i, o := range os {
		s[i] = string(o)
	}
	return strings.Join(s, ", ")
}

func validateTargets(t *TargetSelector, n, parent *yaml.Node, fail failFunc) error {
	line := keyLine(parent, "targets")
	if t.Selector != nil {
		if t.Kind == "" {
			return fail(keyLine(n, "selector"), "a label selector needs the kind of the targets")
		}
		sel, err := metav1.LabelSelectorAsSelector(t.Selector.meta())
		if err != nil {
			return fail(keyLine(n, "selector"), "selector: %v", err)
		}
		t.labels = sel
	}
	if a := t.AttachedTo; a != nil {
		if a.Name == "" || a.Namespace == "" {
			return fail(keyLine(n, "attachedTo"), "attachedTo needs the namespace and name of a Gateway")
		}
		if t.Kind != "" && !slices.Contains(routeKinds, t.Kind) {
			return fail(keyLine(n, "kind"), "attachedTo picks routes, and %s is not a route kind (%s)", t.Kind, strings.Join(routeKinds, ", "))
		}
	}
	if t.Name != "" && t.Kind == "" {
		return fail(line, "a target name needs the kind of the target")
	}
	return nil
}

// meta is the selector as Kubernetes types it.
func (s *LabelSelector) meta() *metav1.LabelSelector {
	m := &metav1.LabelSelector{MatchLabels: s.MatchLabels}
	for _, r := range s.MatchExpressions {
		m.MatchExpressions = append(m.MatchExpressions, metav1.LabelSelectorRequirement{Key: r.Key, Operator: metav1.LabelSelectorOperator(r.Operator), Values: r.Values})
	}
	return m
}

func validateField(f *FieldRule, n *yaml.Node, fail failFunc) error {
	f.line = n.Line
	f.hasEquals = value(n, "equals") != nil
	if f.Path == "" {
		return fail(f.line, "a field needs a path (a JSON pointer, /timeout/request, or dotted, timeout.request)")
	}
	toks, err := pathTokens(f.Path)
	if err != nil {
		return fail(keyLine(n, "path"), "path %q: %v", f.Path, err)
	}
	f.tokens = toks
	hasBound := f.Max != nil || f.Min != nil
	if f.Exists == nil && !f.hasEquals && !hasBound {
		return fail(f.line, "field %s says nothing must hold: give exists, equals, max or min", f.Path)
	}
	if f.Exists != nil && !*f.Exists && (f.hasEquals || hasBound) {
		return fail(keyLine(n, "exists"), "field %s: exists: false contradicts equals, max and min", f.Path)
	}
	for _, b := range []struct {
		key string
		v   interface{}
		to  *bound
	}{{"max", f.Max, &f.max}, {"min", f.Min, &f.min}} {
		if b.v == nil {
			continue
		}
		got, err := parseBound(b.v)
		if err != nil {
			return fail(keyLine(n, b.key), "%s of %s: %v", b.key, f.Path, err)
		}
		*b.to = got
	}
	if f.Max != nil && f.Min != nil && f.max.kind != f.min.kind {
		return fail(keyLine(n, "min"), "min and max of %s are not both numbers or both durations", f.Path)
	}
	return nil
}

// pathTokens splits a JSON pointer, or a dotted path, into its tokens.
func pathTokens(p string) ([]string, error) {
	if strings.HasPrefix(p, "/") {
		if !jsonpointer.Valid(p) {
			return nil, fmt.Errorf("not a JSON pointer: ~ must be followed by 0 or 1")
		}
		return jsonpointer.Tokens(p), nil
	}
	toks := strings.Split(p, ".")
	for _, t := range toks {
		if t == "" {
			return nil, fmt.Errorf("an empty segment (a JSON pointer starts with /; a dotted path has no empty segment)")
		}
	}
	return toks, nil
}
