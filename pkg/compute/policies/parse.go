package policies

// Parsing a policy object: its targets, then one entry per stanza with its
// merge strategy (docs/spec.md §4, §5 "Default strategies", §6 for what is invalid).

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// Parse reads one policy object of kind pk: its targets, then its
// entries (one per stanza, with the merge strategy of each). A malformed
// policy comes back with invalid set and no entries, its targets still read
// so that it can be listed at them (docs/spec.md §6).
func Parse(pk *Kind, obj map[string]interface{}, ns, name string, ts time.Time, defaultStrategy string, clusterScoped func(schema.GroupKind) bool) *semantics.Policy {
	id := semantics.PolicyID{GK: pk.GK, Namespace: ns, Name: name}
	pp := &policyParser{
		pk: pk, d: &pk.Descriptor, obj: obj, ns: ns,
		defaultStrategy: defaultStrategy, clusterScoped: clusterScoped,
		p: &semantics.Policy{ID: id, DisplayName: id.Display(), Created: ts, Raw: obj, Class: pk.Descriptor.Class},
	}
	if err := pp.parse(); err != nil {
		pp.p.Invalid = err.Error()
		pp.p.Entries = nil
	}
	return pp.p
}

// policyParser holds what parsing one policy needs: its kind's descriptor,
// the object, and the server's default strategy for inherited policies that
// name none.
type policyParser struct {
	pk              *Kind
	d               *Descriptor
	obj             map[string]interface{}
	ns              string
	defaultStrategy string
	clusterScoped   func(schema.GroupKind) bool
	p               *semantics.Policy
}

func (pp *policyParser) parse() error {
	rawSpec, has := pp.obj["spec"]
	spec, ok := rawSpec.(map[string]interface{})
	// Targets first, so that an invalid policy can be listed at them.
	if ok {
		pp.readTargetRef()
		pp.readTargetRefs()
		pp.readTargetSelectors()
		pp.readWorkloadSelectors()
	}
	if pp.p.Invalid != "" {
		return errors.New(pp.p.Invalid)
	}
	switch {
	case !has || rawSpec == nil:
		return errors.New("the policy has no spec")
	case !ok:
		return fmt.Errorf("spec must be an object, not %s", jsonType(rawSpec))
	case tooDeep(spec, MaxSpecDepth):
		return fmt.Errorf("spec is nested more than %d levels deep", MaxSpecDepth)
	case len(pp.p.Refs) == 0 && len(pp.p.Selectors) == 0 && !pp.workloadSelected():
		if pp.d.UntargetedScope != semantics.ScopeNamespace || pp.ns == "" {
			return errors.New("the policy names no target")
		}
		pp.p.Untargeted = true
	}
	for _, r := range pp.p.Refs {
		if r.Invalid != "" {
			return errors.New(r.Invalid)
		}
		if !pp.d.Allows(r.Target.Group, r.Target.Kind) {
			return pp.notATargetKind(r.Target.GK())
		}
	}
	for _, sr := range pp.p.Selectors {
		if !pp.d.Allows(sr.GK.Group, sr.GK.Kind) {
			return pp.notATargetKind(sr.GK)
		}
	}
	if pp.d.Class == v1alpha1.ClassDirect {
		return pp.parseDirect(spec)
	}
	return pp.parseInherited(spec)
}

// readTargetRef reads the single-object target fields (targetRef).
func (pp *policyParser) readTargetRef() {
	for _, path := range pp.d.TargetRef {
		v, found := semantics.Lookup(pp.obj, path)
		if !found || v == nil {
			continue
		}
		m, isMap := v.(map[string]interface{})
		if !isMap {
			pp.p.Refs = append(pp.p.Refs, semantics.NamedRef{Invalid: path + " must be an object"})
			continue
		}
		pp.p.Refs = append(pp.p.Refs, parseRef(m, pp.ns, pp.clusterScoped))
	}
}

// readTargetRefs reads the target lists (targetRefs), whose entries name an
// object or carry a label selector.
func (pp *policyParser) readTargetRefs() {
	p := pp.p
	for _, path := range pp.d.TargetRefs {
		for i, it := range targetList(p, pp.obj, pp.pk, path) {
			m, isMap := it.(map[string]interface{})
			if !isMap {
				p.Refs = append(p.Refs, semantics.NamedRef{Invalid: fmt.Sprintf("%s[%d] must be an object", path, i)})
				continue
			}
			if selRaw, hasSel := m["selector"]; hasSel && selRaw != nil {
				if sr, err := parseSelectorRef(m, selRaw); err != nil {
					p.Refs = append(p.Refs, semantics.NamedRef{Invalid: fmt.Sprintf("%s[%d].selector: %v", path, i, err)})
				} else {
					p.Selectors = append(p.Selectors, sr)
				}
				continue
			}
			p.Refs = append(p.Refs, parseRef(m, pp.ns, pp.clusterScoped))
		}
	}
}

// readTargetSelectors reads selector lists whose entries are label
// selectors themselves (Envoy Gateway's targetSelectors).
func (pp *policyParser) readTargetSelectors() {
	p := pp.p
	for _, path := range pp.d.TargetSelectors {
		for i, it := range targetList(p, pp.obj, pp.pk, path) {
			m, isMap := it.(map[string]interface{})
			if !isMap {
				p.Refs = append(p.Refs, semantics.NamedRef{Invalid: fmt.Sprintf("%s[%d] must be an object", path, i)})
				continue
			}
			sel := map[string]interface{}{}
			if v, ok := m["matchLabels"]; ok {
				sel["matchLabels"] = v
			}
			if v, ok := m["matchExpressions"]; ok {
				sel["matchExpressions"] = v
			}
			sr, err := parseSelectorRef(m, sel)
			if err == nil {
				err = readSelectorNamespaces(&sr, m["namespaces"])
			}
			if err != nil {
				p.Refs = append(p.Refs, semantics.NamedRef{Invalid: fmt.Sprintf("%s[%d]: %v", path, i, err)})
			} else {
				p.Selectors = append(p.Selectors, sr)
			}
		}
	}
}

// readWorkloadSelectors reads Istio's workload selectors ({matchLabels}, or EnvoyFilter's
// {labels}), which count only
// when the policy has no targetRef (Istio's policyattachment.go ShouldAttachPolicy): each
// selects the Gateways whose pods carry its labels.
func (pp *policyParser) readWorkloadSelectors() {
	p := pp.p
	if len(p.Refs) > 0 {
		return
	}
	for _, path := range pp.d.WorkloadSelectors {
		v, found := semantics.Lookup(pp.obj, path)
		if !found || v == nil {
			continue
		}
		m, isMap := v.(map[string]interface{})
		if !isMap {
			p.Refs = append(p.Refs, semantics.NamedRef{Invalid: path + " must be an object"})
			continue
		}
		sm := map[string]interface{}{}
		for _, key := range []string{"matchLabels", "labels"} { // EnvoyFilter's workloadSelector says labels
			if ml, ok := m[key]; ok && ml != nil {
				sm["matchLabels"] = ml
				break
			}
		}
		sel, err := topology.ParseSelector(sm)
		if err != nil {
			p.Refs = append(p.Refs, semantics.NamedRef{Invalid: fmt.Sprintf("%s: %v", path, err)})
			continue
		}
		gk := schema.GroupKind{Group: topology.GatewayGroup, Kind: "Gateway"}
		meshWide := pp.rootSelectorMeshWide()
		p.Selectors = append(p.Selectors, semantics.SelectorRef{GK: gk, Selector: sel, GatewayPods: true, Wide: meshWide, Ungranted: meshWide})
	}
}

// rootSelectorMeshWide reports whether the policy's workload selectors select in every
// namespace: its kind's descriptor says so and the policy is in its profile's root namespace.
func (pp *policyParser) rootSelectorMeshWide() bool {
	if !pp.d.RootSelectorsMeshWide || pp.ns == "" {
		return false
	}
	return pp.ns == semantics.RootNamespaceOf(pp.pk.Profile, pp.pk.GK.Kind)
}

// workloadSelected reports whether the policy sets one of its kind's workload selectors.
func (pp *policyParser) workloadSelected() bool {
	for _, path := range pp.d.WorkloadSelectors {
		if v, found := semantics.Lookup(pp.obj, path); found && v != nil {
			return true
		}
	}
	return false
}

// readSelectorNamespaces reads a targetSelectors entry's namespaces (Envoy Gateway v1.9,
// api/v1alpha1/policy_helpers.go TargetSelectorNamespaces): from Same (or absent) selects in
// the policy's namespace, All in every namespace, Selector in the namespaces whose labels
// match selector.
func readSelectorNamespaces(sr *semantics.SelectorRef, v interface{}) error {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]interface{})
	if !ok {
		return fmt.Errorf("namespaces must be an object")
	}
	from, _ := m["from"].(string)
	switch from {
	case "", "Same":
		return nil
	case "All":
		sr.Wide = true
		return nil
	case "Selector":
		sm, ok := m["selector"].(map[string]interface{})
		if !ok {
			return fmt.Errorf("namespaces.selector is required when namespaces.from is Selector")
		}
		sel, err := topology.ParseSelector(sm)
		if err != nil {
			return fmt.Errorf("namespaces.selector: %v", err)
		}
		sr.Wide, sr.NamespaceSelector = true, sel
		return nil
	}
	return fmt.Errorf("namespaces.from must be Same, All or Selector, not %q", from)
}

// notProper lists the spec fields that are not "spec proper": targets and
// the descriptor's ignored fields.
func (pp *policyParser) notProper() []string {
	d := pp.d
	out := append(append(append([]string{}, d.TargetRef...), d.TargetRefs...), d.TargetSelectors...)
	out = append(out, d.WorkloadSelectors...)
	return append(out, d.Ignore...)
}

// parseDirect gives a Direct policy its one entry (strategy None). Stanza
// wrappers are not spec proper: their fields join the rest (overrides over
// defaults over the other fields).
func (pp *policyParser) parseDirect(spec map[string]interface{}) error {
	d := pp.d
	excl := append(append(pp.notProper(), d.Defaults...), d.Overrides...)
	if d.StrategyField != "" {
		excl = append(excl, "spec."+d.StrategyField)
	}
	proper := without(spec, "spec", excl)
	for _, paths := range [][]string{d.Defaults, d.Overrides} {
		sv, err := pp.findStanza(paths)
		if err != nil {
			return err
		}
		if sv == nil {
			continue
		}
		for k, val := range without(sv.m, sv.path, pp.stanzaExclusions(sv.path)) {
			proper[k] = val
		}
	}
	pp.p.Entries = []semantics.Entry{{Stanza: v1alpha1.StanzaNone, Strategy: v1alpha1.MergeNone, Spec: proper, Schema: pp.pk.MergeSchema("spec", "")}}
	return nil
}

// stanzaExclusions are the fields of the stanza at path that are not spec
// proper: the ignored fields and the stanza's own strategy field.
func (pp *policyParser) stanzaExclusions(path string) []string {
	ex := append([]string{}, pp.d.Ignore...)
	if pp.d.StrategyField != "" {
		ex = append(ex, path+"."+pp.d.StrategyField)
	}
	return ex
}

// stanza is one defaults or overrides object of a policy and where it is.
type stanza struct {
	path string
	m    map[string]interface{}
}

// findStanza returns the first of paths that is set (nil when none is).
func (pp *policyParser) findStanza(paths []string) (*stanza, error) {
	for _, path := range paths {
		v, found := semantics.Lookup(pp.obj, path)
		if !found || v == nil {
			continue
		}
		m, isMap := v.(map[string]interface{})
		if !isMap {
			return nil, fmt.Errorf("%s must be an object, not %s", path, jsonType(v))
		}
		return &stanza{path: path, m: m}, nil
	}
	return nil, nil
}

// readStrategy reads the strategy a policy names in m (the spec or a
// stanza at where): "" when it names none.
func (pp *policyParser) readStrategy(m map[string]interface{}, where string) (named, error) {
	d := pp.d
	if d.StrategyField == "" {
		return named{}, nil
	}
	v, ok := m[d.StrategyField]
	if !ok || v == nil {
		return named{}, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return named{}, fmt.Errorf("%s.%s must be a string", where, d.StrategyField)
	}
	st, known := d.StrategyValues[strings.ToLower(s)]
	if !known {
		return named{}, fmt.Errorf("unknown strategy %q in %s.%s (known: %s)", s, where, d.StrategyField, strings.Join(sortedKeys(d.StrategyValues), ", "))
	}
	return named{strategy: st, value: strings.ToLower(s)}, nil
}

// named is the strategy a policy names: Atomic or Patch, and the value as
// written (lower case), which a profile may read (Envoy Gateway's mergeType
// JSONMerge and StrategicMerge are both Patch, and merge lists differently).
type named struct{ strategy, value string }

// or returns n when it names a strategy, else other.
func (n named) or(other named) named {
	if n.strategy != "" {
		return n
	}
	return other
}

// chooseStrategy is docs/spec.md §5's "Default strategies" for one stanza of an
// inherited policy: the strategy the stanza names; else the one the spec
// names; else the descriptor's default; else Patch when the policy has both
// stanzas (only field by field does that make sense); else the server's
// --default-inherited-strategy; else Atomic.
func chooseStrategy(stanzaNamed, specNamed, descriptorDefault string, bothStanzas bool, serverDefault string) string {
	switch {
	case stanzaNamed != "":
		return stanzaNamed
	case specNamed != "":
		return specNamed
	case descriptorDefault != "":
		return descriptorDefault
	case bothStanzas:
		return StrategyPatch
	case serverDefault != "":
		return serverDefault
	}
	return StrategyAtomic
}

// mergeStrategyOf names the GEP merge strategy of a stanza under strategy
// (Atomic or Patch).
func mergeStrategyOf(st v1alpha1.Stanza, strategy string) v1alpha1.MergeStrategy {
	switch {
	case st == v1alpha1.StanzaDefaults && strategy == StrategyPatch:
		return v1alpha1.MergePatchDefaults
	case st == v1alpha1.StanzaOverrides && strategy == StrategyPatch:
		return v1alpha1.MergePatchOverrides
	case st == v1alpha1.StanzaOverrides:
		return v1alpha1.MergeAtomicOverrides
	}
	return v1alpha1.MergeAtomicDefaults
}

// parseInherited gives an Inherited policy an overrides entry (when it has
// the stanza) and a defaults entry (the defaults stanza, joined by the
// fields outside any stanza — the implicit defaults).
func (pp *policyParser) parseInherited(spec map[string]interface{}) error {
	d := pp.d
	specStrategy, err := pp.readStrategy(spec, "spec")
	if err != nil {
		return err
	}
	def, err := pp.findStanza(d.Defaults)
	if err != nil {
		return err
	}
	ovr, err := pp.findStanza(d.Overrides)
	if err != nil {
		return err
	}
	implicitExcl := append(append(pp.notProper(), d.Defaults...), d.Overrides...)
	if d.StrategyField != "" {
		implicitExcl = append(implicitExcl, "spec."+d.StrategyField)
	}
	implicit := map[string]interface{}{}
	if !d.NoImplicitDefaults {
		implicit = without(spec, "spec", implicitExcl)
	}
	both := def != nil && ovr != nil
	add := func(st v1alpha1.Stanza, sv *stanza, base map[string]interface{}) error {
		e, err := pp.entryFor(st, sv, base, specStrategy, both)
		if err == nil {
			pp.p.Entries = append(pp.p.Entries, e)
		}
		return err
	}
	if ovr != nil {
		if err := add(v1alpha1.StanzaOverrides, ovr, nil); err != nil {
			return err
		}
	}
	switch {
	case def != nil:
		var base map[string]interface{}
		if len(implicit) > 0 {
			base = implicit
		}
		return add(v1alpha1.StanzaDefaults, def, base)
	case ovr == nil || len(implicit) > 0:
		return add(v1alpha1.StanzaDefaults, nil, implicit)
	}
	return nil
}

// entryFor builds the entry of stanza st: the stanza's spec proper (sv;
// nil for implicit defaults only) over base (the implicit defaults), with
// its merge strategy.
func (pp *policyParser) entryFor(st v1alpha1.Stanza, sv *stanza, base map[string]interface{}, specStrategy named, both bool) (semantics.Entry, error) {
	var stanzaNamed named
	m := base
	schemaPath := "spec"
	if sv != nil {
		n, err := pp.readStrategy(sv.m, sv.path)
		if err != nil {
			return semantics.Entry{}, err
		}
		stanzaNamed = n
		proper := without(sv.m, sv.path, pp.stanzaExclusions(sv.path))
		if base != nil {
			// Fields outside the stanza join the defaults; the stanza wins.
			merged := deepCopyMap(base)
			for k, v := range proper {
				merged[k] = v
			}
			proper = merged
		}
		m = proper
		schemaPath = sv.path
	}
	strategy := chooseStrategy(stanzaNamed.strategy, specStrategy.strategy, pp.d.DefaultStrategy, both, pp.defaultStrategy)
	if m == nil {
		m = map[string]interface{}{}
	}
	value := stanzaNamed.or(specStrategy).value
	sch := pp.pk.MergeSchema(schemaPath, value)
	return semantics.Entry{Stanza: st, Strategy: mergeStrategyOf(st, strategy), Named: value, Spec: m, Schema: sch, Leaves: countLeaves(m, sch)}, nil
}

// countLeaves counts the leaves spec has on its own (see merge.WalkLeaves).
func countLeaves(spec map[string]interface{}, sch *merge.Schema) int {
	n := 0
	merge.WalkLeaves(merge.StripNulls(merge.Build(spec, 0, sch)), "", func(string, int) { n++ })
	return n
}

// notATargetKind is why a policy naming a target of a kind its implementation does not accept is
// Invalid.
func (pp *policyParser) notATargetKind(gk schema.GroupKind) error {
	return fmt.Errorf("%s cannot target %s: it targets only %s", pp.d.Kind, gk.String(), pp.d.TargetKindsText())
}
