package check

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/jsonpointer"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// defaultOutcomes are what a policy rule asks of a kind's sources when it
// names none: something of the kind takes effect.
var defaultOutcomes = []v1alpha1.Outcome{v1alpha1.OutcomeEnforced, v1alpha1.OutcomePartiallyEnforced}

// checkTarget says what of e fails on a target that policies (one entry
// per policy kind reaching it) reach; nothing when e holds.
func checkTarget(e *Expectation, policies []v1alpha1.TargetPolicy) []string {
	var kinds []v1alpha1.TargetPolicy
	for _, tp := range policies {
		if e.Policy == nil || e.Policy.matches(tp) {
			kinds = append(kinds, tp)
		}
	}
	var failures []string
	if e.Policy != nil && len(kinds) == 0 && !e.Policy.Optional {
		failures = append(failures, fmt.Sprintf("no %s reaches it", e.Policy.name()))
	}
	for _, tp := range kinds {
		for _, s := range tp.Sources {
			if slices.Contains(e.ForbiddenOutcomes, s.Outcome) {
				failures = append(failures, fmt.Sprintf("%s %s is %s: %s", kindName(tp), policyName(s), s.Outcome, s.Message))
			}
		}
		if e.AllowAssumedSemantics != nil && !*e.AllowAssumedSemantics && tp.Semantics == v1alpha1.SemanticsAssumed {
			failures = append(failures, fmt.Sprintf("%s is computed with assumed semantics (no descriptor or profile describes it)", kindName(tp)))
		}
		if e.Policy != nil {
			failures = append(failures, e.Policy.check(tp)...)
		}
	}
	return failures
}

func (p *PolicyRule) matches(tp v1alpha1.TargetPolicy) bool {
	return tp.Kind == p.Kind && (p.Group == "" || p.Group == tp.Group)
}

func (p *PolicyRule) name() string {
	if p.Group == "" {
		return p.Kind
	}
	return p.Kind + "." + p.Group
}

func kindName(tp v1alpha1.TargetPolicy) string { return tp.Kind + "." + tp.Group }

func policyName(s v1alpha1.PolicySource) string {
	if s.Namespace == "" {
		return s.Name
	}
	return s.Namespace + "/" + s.Name
}

// check is what of the rule fails for one policy kind reaching the target.
func (p *PolicyRule) check(tp v1alpha1.TargetPolicy) []string {
	want := p.Outcomes
	if len(want) == 0 {
		want = defaultOutcomes
	}
	var found []string
	ok := false
	for _, s := range tp.Sources {
		ok = ok || slices.Contains(want, s.Outcome)
		found = append(found, policyName(s)+" "+string(s.Outcome))
	}
	var failures []string
	if !ok {
		failures = append(failures, fmt.Sprintf("no %s is %s (found: %s)", kindName(tp), strings.Join(outcomeWords(want), " or "), strings.Join(found, ", ")))
	}
	if len(p.Fields) == 0 {
		return failures
	}
	if len(tp.Effective) == 0 {
		return append(failures, fmt.Sprintf("%s has no effective spec (no source of it is merged)", kindName(tp)))
	}
	for _, es := range tp.Effective {
		var spec interface{}
		if err := json.Unmarshal(es.Spec.Raw, &spec); err != nil {
			failures = append(failures, fmt.Sprintf("%s %s: the effective spec is not JSON: %v", kindName(tp), entryName(es), err))
			continue
		}
		for i := range p.Fields {
			if why := p.Fields[i].check(spec, es.FieldSources); why != "" {
				failures = append(failures, fmt.Sprintf("%s %s: %s", kindName(tp), entryName(es), why))
			}
		}
	}
	return failures
}

func outcomeWords(os []v1alpha1.Outcome) []string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = string(o)
	}
	return out
}

// entryName names an effective entry: its via, and its section.
func entryName(es v1alpha1.EffectiveSpec) string {
	parts := make([]string, len(es.Via))
	for i, r := range es.Via {
		parts[i] = refString(r)
	}
	s := "via " + strings.Join(parts, " › ")
	if es.SectionName != "" {
		s += " (section " + es.SectionName + ")"
	}
	return s
}

func refString(r v1alpha1.ObjectReference) string {
	s := r.Kind + " "
	if r.Namespace != "" {
		s += r.Namespace + "/"
	}
	s += r.Name
	if r.SectionName != "" {
		s += " " + r.SectionName
	}
	return s
}

// check says why the field rule fails on spec, "" when it holds.
// sources are the entry's fieldSources, to name who set a value.
func (f *FieldRule) check(spec interface{}, sources map[string]string) string {
	v, found := lookup(spec, f.tokens)
	switch {
	case !found && f.Exists != nil && *f.Exists:
		return fmt.Sprintf("%s is not set", f.Path)
	case !found && (f.hasEquals || f.Max != nil || f.Min != nil) && !f.Optional:
		return fmt.Sprintf("%s is not set", f.Path)
	case !found:
		return ""
	case f.Exists != nil && !*f.Exists:
		return fmt.Sprintf("%s is set to %s%s", f.Path, show(v), setBy(f.tokens, sources))
	case f.hasEquals && !equal(v, f.Equals):
		return fmt.Sprintf("%s is %s, not %s%s", f.Path, show(v), show(normalize(f.Equals)), setBy(f.tokens, sources))
	}
	for _, b := range []struct {
		b     bound
		upper bool
	}{{f.max, true}, {f.min, false}} {
		if b.b.kind == noBound {
			continue
		}
		if why := within(v, b.b, b.upper); why != "" {
			return fmt.Sprintf("%s %s%s", f.Path, why, setBy(f.tokens, sources))
		}
	}
	return ""
}

// setBy names the policies whose values the field (or the leaves below
// it) hold.
func setBy(tokens []string, sources map[string]string) string {
	p := ""
	for _, t := range tokens {
		p += "/" + jsonpointer.Escape(t)
	}
	seen := map[string]bool{}
	var names []string
	for ptr, policy := range sources {
		if (ptr == p || strings.HasPrefix(ptr, p+"/")) && !seen[policy] {
			seen[policy] = true
			names = append(names, policy)
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	return " (set by " + strings.Join(names, ", ") + ")"
}
