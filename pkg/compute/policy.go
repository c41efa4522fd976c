package compute

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// policyKind is a CRD the engine treats as a policy.
type policyKind struct {
	gk         schema.GroupKind
	gvr        schema.GroupVersionResource
	desc       Descriptor
	namespaced bool
	schema     *apiextv1.JSONSchemaProps // the openAPIV3Schema of the watched version (may be nil)
	// merge caches compileMerge of the schema at a stanza path; filled
	// while parsing policies, which holds the engine's write lock.
	merge map[string]*mschema
}

// mergeSchema returns the compiled merge schema at a dotted path.
func (pk *policyKind) mergeSchema(path string) *mschema {
	if m, ok := pk.merge[path]; ok {
		return m
	}
	m := compileMerge(schemaAt(pk.schema, path), 0)
	if pk.merge == nil {
		pk.merge = map[string]*mschema{}
	}
	pk.merge[path] = m
	return m
}

type policyID struct {
	gk            schema.GroupKind
	namespace, nm string
}

func (p policyID) display() string {
	if p.namespace == "" {
		return p.nm
	}
	return p.namespace + "/" + p.nm
}

// entry is one stanza of a policy (SPEC §5.1).
type entry struct {
	stanza   v1alpha1.Stanza
	strategy v1alpha1.MergeStrategy
	spec     map[string]interface{}
	schema   *mschema // list-maps of the stanza's schema
	leaves   int      // leaves of the spec (fieldSources entries it would set alone)
}

type namedRef struct {
	target  nodeID // Section carries sectionName; Namespace "" for cluster-scoped kinds
	explNS  bool   // targetRef.namespace was given
	invalid string // malformed reference
}

type selectorRef struct {
	gk  schema.GroupKind
	sel labels.Selector
}

type policy struct {
	id        policyID
	disp      string // id.display(), kept: outputs name policies often
	ts        time.Time
	raw       map[string]interface{}
	refs      []namedRef
	selectors []selectorRef
	entries   []entry
	invalid   string // whole policy is malformed
	class     v1alpha1.PolicyClass
	res       resolution // current attachments (maintained by state)
}

func pathParts(p string) []string { return strings.Split(p, ".") }

// lookup walks a dotted path from the object root.
func lookup(obj map[string]interface{}, path string) (interface{}, bool) {
	var cur interface{} = obj
	for _, part := range pathParts(path) {
		m, ok := cur.(map[string]interface{})
		if !ok {
			return nil, false
		}
		cur, ok = m[part]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

func schemaAt(root *apiextv1.JSONSchemaProps, path string) *apiextv1.JSONSchemaProps {
	s := root
	for _, part := range pathParts(path) {
		s = schemaChild(s, part)
		if s == nil {
			return nil
		}
	}
	return s
}

// without returns a copy of m (a map at path base) with the given dotted
// paths removed; paths not under base are ignored.
func without(m map[string]interface{}, base string, paths []string) map[string]interface{} {
	out := deepCopyMap(m)
	for _, p := range paths {
		if !strings.HasPrefix(p, base+".") {
			continue
		}
		parts := pathParts(strings.TrimPrefix(p, base+"."))
		cur := out
		for i, part := range parts {
			if i == len(parts)-1 {
				delete(cur, part)
				break
			}
			next, ok := cur[part].(map[string]interface{})
			if !ok {
				break
			}
			cur = next
		}
	}
	return out
}

func deepCopyMap(m map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(m))
	for k, v := range m {
		out[k] = deepCopyValue(v)
	}
	return out
}

func deepCopyValue(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		return deepCopyMap(t)
	case []interface{}:
		l := make([]interface{}, len(t))
		for i, it := range t {
			l[i] = deepCopyValue(it)
		}
		return l
	}
	return v
}

func parseRef(m map[string]interface{}, policyNS string, clusterScoped func(schema.GroupKind) bool) namedRef {
	var r namedRef
	g, gok := m["group"]
	k, kok := m["kind"].(string)
	n, nok := m["name"].(string)
	gs, gsok := g.(string)
	if (gok && !gsok && g != nil) || !kok || !nok || k == "" || n == "" {
		r.invalid = "a target reference needs string fields kind and name (and group)"
		return r
	}
	if gs == "core" {
		gs = ""
	}
	r.target = nodeID{Group: gs, Kind: k, Name: n, Namespace: policyNS}
	if v, ok := m["namespace"]; ok && v != nil {
		s, ok := v.(string)
		if !ok {
			r.invalid = "targetRef namespace must be a string"
			return r
		}
		if s != "" {
			r.target.Namespace = s
			r.explNS = s != policyNS
		}
	}
	if v, ok := m["sectionName"]; ok && v != nil {
		s, ok := v.(string)
		if !ok {
			r.invalid = "targetRef sectionName must be a string"
			return r
		}
		r.target.Section = s
	}
	if clusterScoped(r.target.gk()) {
		r.target.Namespace = ""
		r.explNS = false
		// A namespaced policy may target its own Namespace; another one is
		// a cross-namespace reference (it would reach everything there).
		if isNamespaceNode(r.target) && policyNS != "" && r.target.Name != policyNS {
			r.explNS = true
		}
	}
	return r
}

func maxItemsAt(root *apiextv1.JSONSchemaProps, path string) (int64, bool) {
	s := schemaAt(root, path)
	if s == nil || s.MaxItems == nil {
		return 0, false
	}
	return *s.MaxItems, true
}

// parsePolicy reads one policy object as its kind's descriptor says.
// defaultStrategy is the engine default (Atomic or Patch).
// MaxSpecDepth bounds how deeply a policy's spec may nest (objects and
// lists); a deeper policy is Invalid. The output wraps the merged spec in
// about ten more levels (list, object, targets, policies, effective, watch
// event), and Kubernetes JSON decoders refuse documents nested more than
// 10,000 levels deep: without a bound, one policy nested close to what the
// kube-apiserver accepts would make the EffectivePolicy (and every list
// holding it) undecodable for every client. Real policies nest a few dozen
// levels at most.
const MaxSpecDepth = 1000

// tooDeep reports whether v nests more than max levels of objects and lists
// (v itself is level 1). It stops descending past max, so its recursion is
// bounded whatever the input.
func tooDeep(v interface{}, max int) bool {
	if max < 1 {
		switch v.(type) {
		case map[string]interface{}, []interface{}:
			return true
		}
		return false
	}
	switch c := v.(type) {
	case map[string]interface{}:
		for _, x := range c {
			if tooDeep(x, max-1) {
				return true
			}
		}
	case []interface{}:
		for _, x := range c {
			if tooDeep(x, max-1) {
				return true
			}
		}
	}
	return false
}

// targetList reads the list of target entries at path (targetRefs or
// selector lists). A value that is not a list is recorded as an invalid
// reference; a list longer than the CRD's maxItems makes the whole policy
// invalid (its entries are still read, so it can be listed at its targets).
func (p *policy) targetList(obj map[string]interface{}, pk *policyKind, path string) []interface{} {
	v, found := lookup(obj, path)
	if !found || v == nil {
		return nil
	}
	l, isList := v.([]interface{})
	if !isList {
		p.refs = append(p.refs, namedRef{invalid: path + " must be a list"})
		return nil
	}
	if max, ok := maxItemsAt(pk.schema, path); ok && int64(len(l)) > max {
		p.invalid = fmt.Sprintf("%s has %d items, more than the %d the CRD allows", path, len(l), max)
	}
	return l
}

// parsePolicy reads one policy object of kind pk: its targets, then its
// entries (one per stanza, with the merge strategy of each). A malformed
// policy comes back with invalid set and no entries, its targets still read
// so that it can be listed at them (SPEC §6).
func parsePolicy(pk *policyKind, obj map[string]interface{}, ns, name string, ts time.Time, defaultStrategy string, clusterScoped func(schema.GroupKind) bool) *policy {
	id := policyID{gk: pk.gk, namespace: ns, nm: name}
	pp := &policyParser{
		pk: pk, d: &pk.desc, obj: obj, ns: ns,
		defaultStrategy: defaultStrategy, clusterScoped: clusterScoped,
		p: &policy{id: id, disp: id.display(), ts: ts, raw: obj, class: pk.desc.Class},
	}
	if err := pp.parse(); err != nil {
		pp.p.invalid = err.Error()
		pp.p.entries = nil
	}
	return pp.p
}

// policyParser holds what parsing one policy needs: its kind's descriptor,
// the object, and the server's default strategy for inherited policies that
// name none.
type policyParser struct {
	pk              *policyKind
	d               *Descriptor
	obj             map[string]interface{}
	ns              string
	defaultStrategy string
	clusterScoped   func(schema.GroupKind) bool
	p               *policy
}

func (pp *policyParser) parse() error {
	rawSpec, has := pp.obj["spec"]
	spec, ok := rawSpec.(map[string]interface{})
	// Targets first, so that an invalid policy can be listed at them.
	if ok {
		pp.readTargetRef()
		pp.readTargetRefs()
		pp.readTargetSelectors()
	}
	if pp.p.invalid != "" {
		return errors.New(pp.p.invalid)
	}
	switch {
	case !has || rawSpec == nil:
		return errors.New("the policy has no spec")
	case !ok:
		return fmt.Errorf("spec must be an object, not %s", jsonType(rawSpec))
	case tooDeep(spec, MaxSpecDepth):
		return fmt.Errorf("spec is nested more than %d levels deep", MaxSpecDepth)
	case len(pp.p.refs) == 0 && len(pp.p.selectors) == 0:
		return errors.New("the policy names no target")
	}
	for _, r := range pp.p.refs {
		if r.invalid != "" {
			return errors.New(r.invalid)
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
		v, found := lookup(pp.obj, path)
		if !found || v == nil {
			continue
		}
		m, isMap := v.(map[string]interface{})
		if !isMap {
			pp.p.refs = append(pp.p.refs, namedRef{invalid: path + " must be an object"})
			continue
		}
		pp.p.refs = append(pp.p.refs, parseRef(m, pp.ns, pp.clusterScoped))
	}
}

// readTargetRefs reads the target lists (targetRefs), whose entries name an
// object or carry a label selector.
func (pp *policyParser) readTargetRefs() {
	p := pp.p
	for _, path := range pp.d.TargetRefs {
		for i, it := range p.targetList(pp.obj, pp.pk, path) {
			m, isMap := it.(map[string]interface{})
			if !isMap {
				p.refs = append(p.refs, namedRef{invalid: fmt.Sprintf("%s[%d] must be an object", path, i)})
				continue
			}
			if selRaw, hasSel := m["selector"]; hasSel && selRaw != nil {
				if sr, err := parseSelectorRef(m, selRaw); err != nil {
					p.refs = append(p.refs, namedRef{invalid: fmt.Sprintf("%s[%d].selector: %v", path, i, err)})
				} else {
					p.selectors = append(p.selectors, sr)
				}
				continue
			}
			p.refs = append(p.refs, parseRef(m, pp.ns, pp.clusterScoped))
		}
	}
}

// readTargetSelectors reads selector lists whose entries are label
// selectors themselves (Envoy Gateway's targetSelectors).
func (pp *policyParser) readTargetSelectors() {
	p := pp.p
	for _, path := range pp.d.TargetSelectors {
		for i, it := range p.targetList(pp.obj, pp.pk, path) {
			m, isMap := it.(map[string]interface{})
			if !isMap {
				p.refs = append(p.refs, namedRef{invalid: fmt.Sprintf("%s[%d] must be an object", path, i)})
				continue
			}
			sel := map[string]interface{}{}
			if v, ok := m["matchLabels"]; ok {
				sel["matchLabels"] = v
			}
			if v, ok := m["matchExpressions"]; ok {
				sel["matchExpressions"] = v
			}
			if sr, err := parseSelectorRef(m, sel); err != nil {
				p.refs = append(p.refs, namedRef{invalid: fmt.Sprintf("%s[%d]: %v", path, i, err)})
			} else {
				p.selectors = append(p.selectors, sr)
			}
		}
	}
}

// notProper lists the spec fields that are not "spec proper": targets and
// the descriptor's ignored fields.
func (pp *policyParser) notProper() []string {
	d := pp.d
	out := append(append(append([]string{}, d.TargetRef...), d.TargetRefs...), d.TargetSelectors...)
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
	pp.p.entries = []entry{{stanza: v1alpha1.StanzaNone, strategy: v1alpha1.MergeNone, spec: proper, schema: pp.pk.mergeSchema("spec")}}
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
		v, found := lookup(pp.obj, path)
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
func (pp *policyParser) readStrategy(m map[string]interface{}, where string) (string, error) {
	d := pp.d
	if d.StrategyField == "" {
		return "", nil
	}
	v, ok := m[d.StrategyField]
	if !ok || v == nil {
		return "", nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", fmt.Errorf("%s.%s must be a string", where, d.StrategyField)
	}
	st, known := d.StrategyValues[strings.ToLower(s)]
	if !known {
		return "", fmt.Errorf("unknown strategy %q in %s.%s (known: %s)", s, where, d.StrategyField, strings.Join(sortedKeys(d.StrategyValues), ", "))
	}
	return st, nil
}

// chooseStrategy is SPEC §5's "Default strategies" for one stanza of an
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
			pp.p.entries = append(pp.p.entries, e)
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
func (pp *policyParser) entryFor(st v1alpha1.Stanza, sv *stanza, base map[string]interface{}, specStrategy string, both bool) (entry, error) {
	var named string
	m := base
	sch := pp.pk.mergeSchema("spec")
	if sv != nil {
		n, err := pp.readStrategy(sv.m, sv.path)
		if err != nil {
			return entry{}, err
		}
		named = n
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
		sch = pp.pk.mergeSchema(sv.path)
	}
	strategy := chooseStrategy(named, specStrategy, pp.d.DefaultStrategy, both, pp.defaultStrategy)
	if m == nil {
		m = map[string]interface{}{}
	}
	return entry{stanza: st, strategy: mergeStrategyOf(st, strategy), spec: m, schema: sch, leaves: countLeaves(m, sch)}, nil
}

// countLeaves counts the leaves spec has on its own (see walkLeaves).
func countLeaves(spec map[string]interface{}, sch *mschema) int {
	n := 0
	walkLeaves(stripNulls(build(spec, 0, sch)), "", func(string, int) { n++ })
	return n
}

func parseSelectorRef(m map[string]interface{}, selRaw interface{}) (selectorRef, error) {
	k, ok := m["kind"].(string)
	if !ok || k == "" {
		return selectorRef{}, fmt.Errorf("kind is required")
	}
	g := ""
	if v, ok := m["group"]; ok && v != nil {
		s, isStr := v.(string)
		if !isStr {
			return selectorRef{}, fmt.Errorf("group must be a string")
		}
		g = s
	}
	if g == "core" {
		g = ""
	}
	sm, ok := selRaw.(map[string]interface{})
	if !ok {
		return selectorRef{}, fmt.Errorf("selector must be an object")
	}
	sel, err := parseSelector(sm)
	if err != nil {
		return selectorRef{}, err
	}
	return selectorRef{gk: schema.GroupKind{Group: g, Kind: k}, sel: sel}, nil
}

func jsonType(v interface{}) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, int, int32, float64, float32:
		return "a number"
	case []interface{}:
		return "a list"
	case map[string]interface{}:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
