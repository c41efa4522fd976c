package render

import (
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/jsonpointer"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/tree"
)

// Review draws the answer of an EffectivePolicyReview (docs/spec.md §10), online
// or built offline from two sets of manifests: per EffectivePolicy that
// would change, what changes — a compact diff of before and after, not two
// dumps. Under each changed target, per policy kind: the effective entries
// that appear (+), disappear (-) or change, and in those the fields that
// do, "old -> new" (values and the policy that set them); then the sources
// whose outcome, strategy or message changes. What stays the same is left
// out. Hidden changes are counted last.
func Review(s v1alpha1.EffectivePolicyReviewStatus) []*tree.Node {
	var roots []*tree.Node
	for _, c := range s.Changes {
		roots = append(roots, changeNode(c))
	}
	if s.HiddenChanges > 0 {
		roots = append(roots, tree.New(
			tree.S(tree.Warn, plural(s.HiddenChanges, "more change")),
			tree.S(tree.Muted, " in namespaces where you may not get effectivepolicies"),
		))
	}
	return roots
}

// changeNode is one changed EffectivePolicy or ClusterEffectivePolicy.
func changeNode(c v1alpha1.EffectivePolicyChange) *tree.Node {
	resource := "EffectivePolicy"
	if c.Resource == "clustereffectivepolicies" {
		resource = "ClusterEffectivePolicy"
	}
	style := tree.Warn
	switch c.Change {
	case v1alpha1.ChangeAdded:
		style = tree.Added
	case v1alpha1.ChangeDeleted:
		style = tree.Removed
	}
	n := tree.New(tree.S(tree.Heading, resource+" "+qualified(c.Namespace, c.Name)), tree.P("  "), tree.S(style, string(c.Change)))
	for _, p := range matchPairs(c.Before.Targets, c.After.Targets, func(t v1alpha1.Target) string { return t.Group + "/" + t.Kind + "/" + t.Name }) {
		n.Append(targetChange(c.Namespace, p))
	}
	return orUnchanged(n)
}

// pair is one item before and after a change: nil before when it appears,
// nil after when it goes away.
type pair[T any] struct{ before, after *T }

func (p pair[T]) marker() []tree.Span {
	switch {
	case p.before == nil:
		return []tree.Span{tree.S(tree.Added, "+ ")}
	case p.after == nil:
		return []tree.Span{tree.S(tree.Removed, "- ")}
	}
	return nil
}

// either is the item after the change, or before it when it goes away.
func (p pair[T]) either() *T {
	if p.after != nil {
		return p.after
	}
	return p.before
}

// matchPairs matches the items of two lists by key: every item of after, in
// its order, with the item of before of the same key (the first one not
// yet taken); the items of before that nothing matches are put where they
// stood, after the matched item that preceded them.
func matchPairs[T any](before, after []T, key func(T) string) []pair[T] {
	taken := make([]bool, len(before))
	find := func(k string) int {
		for i := range before {
			if !taken[i] && key(before[i]) == k {
				return i
			}
		}
		return -1
	}
	match := make([]int, len(after))
	for i := range after {
		if match[i] = find(key(after[i])); match[i] >= 0 {
			taken[match[i]] = true
		}
	}
	var out []pair[T]
	next := 0 // the first item of before not yet placed
	removed := func(upto int) {
		for ; next < upto; next++ {
			if !taken[next] {
				out = append(out, pair[T]{before: &before[next]})
			}
		}
	}
	for i := range after {
		if j := match[i]; j >= 0 {
			removed(j)
			next = max(next, j+1)
			out = append(out, pair[T]{before: &before[j], after: &after[i]})
			continue
		}
		// What goes away before the next match comes first, as in a
		// unified diff.
		upto := len(before)
		for _, j := range match[i+1:] {
			if j >= 0 {
				upto = j
				break
			}
		}
		removed(upto)
		out = append(out, pair[T]{after: &after[i]})
	}
	removed(len(before))
	return out
}

// targetChange is one target of a changed EffectivePolicy, nil when it
// does not change.
func targetChange(namespace string, p pair[v1alpha1.Target]) *tree.Node {
	if p.before != nil && p.after != nil && reflect.DeepEqual(*p.before, *p.after) {
		return nil
	}
	t := p.either()
	n := tree.New(append(p.marker(), tree.S(tree.Heading, t.Kind+" "+qualified(namespace, t.Name)))...)
	var before, after []v1alpha1.TargetPolicy
	if p.before != nil {
		before = p.before.Policies
	}
	if p.after != nil {
		after = p.after.Policies
	}
	for _, kp := range matchPairs(before, after, func(tp v1alpha1.TargetPolicy) string { return tp.Group + "/" + tp.Kind }) {
		n.Append(kindChange(kp))
	}
	return orUnchanged(n)
}

// kindChange is one policy kind of a changed target, nil when it does not
// change.
func kindChange(p pair[v1alpha1.TargetPolicy]) *tree.Node {
	if p.before != nil && p.after != nil && reflect.DeepEqual(*p.before, *p.after) {
		return nil
	}
	tp := p.either()
	line := append(p.marker(), tree.S(tree.Kind, kindName(tp.Group, tp.Kind)), tree.S(tree.Muted, "  "+string(tp.Class)))
	if p.before != nil && p.after != nil && p.before.Class != p.after.Class {
		line = append(append(line[:len(line)-1], tree.P("  ")), changed(string(p.before.Class), string(p.after.Class))...)
	}
	n := tree.New(append(line, assumedMarker(tp.Semantics)...)...)
	var before, after v1alpha1.TargetPolicy
	if p.before != nil {
		before = *p.before
	}
	if p.after != nil {
		after = *p.after
	}
	for _, ep := range entryPairs(before.Effective, after.Effective) {
		n.Append(entryChange(ep))
	}
	sources := tree.New(tree.P("sources"))
	for _, sp := range matchPairs(before.Sources, after.Sources, sourceKey) {
		sources.Append(sourceChange(sp))
	}
	if len(sources.Children) > 0 {
		n.Append(sources)
	}
	return orUnchanged(n)
}

// entryPairs matches effective entries by context (section and via); an
// entry whose via changes (an attachment point more or less on the path)
// is paired with the one of the same section that went away, so that its
// fields are compared rather than listed twice.
func entryPairs(before, after []v1alpha1.EffectiveSpec) []pair[v1alpha1.EffectiveSpec] {
	ps := matchPairs(before, after, func(e v1alpha1.EffectiveSpec) string { return e.SectionName + "\x00" + via(e.Via) })
	gone := map[int]bool{} // entries that went away, paired with a new one
	was := map[int]int{}   // a new entry -> the one it replaces
	for i, p := range ps {
		if p.before != nil {
			continue
		}
		for j, q := range ps {
			if q.after == nil && !gone[j] && q.before.SectionName == p.after.SectionName {
				gone[j], was[i] = true, j
				break
			}
		}
	}
	var out []pair[v1alpha1.EffectiveSpec]
	for i, p := range ps {
		if gone[i] {
			continue
		}
		if j, ok := was[i]; ok {
			p.before = ps[j].before
		}
		out = append(out, p)
	}
	return out
}

// entryChange is one effective entry of a changed policy kind, nil when it
// does not change: its context, the context it had when that changes, and
// the fields that change.
func entryChange(p pair[v1alpha1.EffectiveSpec]) *tree.Node {
	if p.before != nil && p.after != nil && reflect.DeepEqual(*p.before, *p.after) {
		return nil
	}
	e := p.either()
	line := p.marker()
	if e.SectionName != "" {
		line = append(line, tree.P("section "), tree.S(tree.Heading, e.SectionName), tree.P(", "))
	}
	n := tree.New(append(line, tree.P("via "+via(e.Via)))...)
	if p.before != nil && p.after != nil && via(p.before.Via) != via(p.after.Via) {
		n.Add(tree.S(tree.Muted, "was via "+via(p.before.Via)))
	}
	var before, after []leafValue
	if p.before != nil {
		before = leaves(p.before.Spec.Raw, p.before.FieldSources)
	}
	if p.after != nil {
		after = leaves(p.after.Spec.Raw, p.after.FieldSources)
	}
	fieldChanges(n, matchPairs(before, after, func(l leafValue) string { return l.ptr }))
	if len(n.Children) == 0 && (p.before == nil || p.after == nil) {
		n.Add(tree.S(tree.Muted, "no settings"))
	}
	return orUnchanged(n)
}

// leafValue is one leaf of a merged spec, as describe shows it: its
// pointer, the names on the way to it, its value and the policy that set it.
type leafValue struct {
	ptr    string
	path   []string
	value  any
	source string
}

// leaves flattens a merged spec into its leaves, in describe's order (keys
// sorted, items by index); a leaf is what describe's settings tree draws
// as one line.
func leaves(raw []byte, sources map[string]string) []leafValue {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	v, err := decodeSpec(raw)
	if err != nil {
		return []leafValue{{path: []string{"spec"}, value: string(raw)}}
	}
	if items, ok := isOrdered(v, sources); ok {
		return orderedLeaves(items, sources)
	}
	if m, ok := v.(map[string]any); !ok || len(m) == 0 {
		return []leafValue{{path: []string{"spec"}, value: v, source: sources[""]}}
	}
	var out []leafValue
	var walk func(v any, ptr string, path []string)
	member := func(name string, v any, ptr string, path []string) {
		path = append(slices.Clip(path), name)
		if isLeaf(v, ptr, sources) {
			out = append(out, leafValue{ptr: ptr, path: path, value: v, source: sources[ptr]})
			return
		}
		walk(v, ptr, path)
	}
	walk = func(v any, ptr string, path []string) {
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				member(k, v[k], ptr+"/"+jsonpointer.Escape(k), path)
			}
		case []any:
			for i, item := range v {
				member("["+strconv.Itoa(i)+"]", item, ptr+"/"+strconv.Itoa(i), path)
			}
		}
	}
	walk(v, "", nil)
	return out
}

// fieldChanges adds under n the leaves that change, each under the names
// of the objects it is in (one node per name, shared by its leaves).
func fieldChanges(n *tree.Node, ps []pair[leafValue]) {
	parents := map[string]*tree.Node{}
	parent := func(path []string) *tree.Node {
		at := n
		for i := range path {
			key := strings.Join(path[:i+1], "\x00")
			next, ok := parents[key]
			if !ok {
				next = at.Add(tree.P(path[i]))
				parents[key] = next
			}
			at = next
		}
		return at
	}
	for _, p := range ps {
		b, a := p.before, p.after
		if b != nil && a != nil && reflect.DeepEqual(b.value, a.value) && b.source == a.source {
			continue
		}
		l := p.either()
		line := append(p.marker(), tree.P(l.path[len(l.path)-1]+": "))
		if b != nil && a != nil && !reflect.DeepEqual(b.value, a.value) {
			line = append(line, changed(value(b.value), value(a.value))...)
		} else {
			line = append(line, tree.P(value(l.value)))
		}
		switch {
		case b != nil && a != nil && b.source != a.source:
			line = append(line, tree.S(tree.Source, "  ← "+orNone(b.source)+" -> "+orNone(a.source)))
		case l.source != "":
			line = append(line, tree.S(tree.Source, "  ← "+l.source))
		}
		parent(l.path[:len(l.path)-1]).Add(line...)
	}
}

// sourceKey identifies a source across a change: the policy, its stanza
// and where it is attached.
func sourceKey(s v1alpha1.PolicySource) string {
	return qualified(s.Namespace, s.Name) + "\x00" + string(s.Stanza) + "\x00" + Ref(s.AttachedTo)
}

// sourceChange is one source that appears, goes away, or whose verdict
// changes (outcome, merge strategy, message); nil when it stays as it was.
func sourceChange(p pair[v1alpha1.PolicySource]) *tree.Node {
	b, a := p.before, p.after
	if b == nil || a == nil {
		n := sourceNode(*p.either())
		n.Line = append(p.marker(), n.Line...)
		return n
	}
	if *b == *a {
		return nil
	}
	line := []tree.Span{tree.S(tree.Heading, qualified(a.Namespace, a.Name)), tree.P("  ")}
	if b.Outcome != a.Outcome {
		line = append(line, tree.S(outcomeStyle(b.Outcome), string(b.Outcome)), tree.P(" -> "), tree.S(outcomeStyle(a.Outcome), string(a.Outcome)))
	} else {
		line = append(line, tree.S(outcomeStyle(a.Outcome), string(a.Outcome)))
	}
	strategy := a.MergeStrategy
	if b.MergeStrategy != a.MergeStrategy {
		strategy = v1alpha1.MergeStrategy(orNone(string(b.MergeStrategy)) + " -> " + orNone(string(a.MergeStrategy)))
	}
	n := tree.New(append(line, tree.S(tree.Muted, "  "+sourceDetail(*a, strategy)))...)
	switch {
	case b.Message == a.Message && a.Message != "":
		n.Add(tree.P(a.Message))
	case b.Message != a.Message:
		if b.Message != "" {
			n.Add(tree.S(tree.Removed, "- "), tree.P(b.Message))
		}
		if a.Message != "" {
			n.Add(tree.S(tree.Added, "+ "), tree.P(a.Message))
		}
	}
	return n
}

// changed is "old -> new", old in the color of what goes, new of what comes.
func changed(was, now string) []tree.Span {
	return []tree.Span{tree.S(tree.Removed, was), tree.P(" -> "), tree.S(tree.Added, now)}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// orUnchanged returns n, or n saying that nothing it shows changes: the
// difference lies in what the diff does not draw (the order of entries).
func orUnchanged(n *tree.Node) *tree.Node {
	if n != nil && len(n.Children) == 0 && n.Line[0].Style != tree.Added && n.Line[0].Style != tree.Removed {
		n.Add(tree.S(tree.Muted, "reordered, otherwise the same"))
	}
	return n
}
