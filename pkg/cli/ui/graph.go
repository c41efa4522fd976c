package ui

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/render"
)

// Graph is what the page draws: the objects of the hierarchy that the
// policies' contexts name (each effective entry's via chain, least specific
// first, and its target), and an edge from each to the next. An object no
// policy reaches and no context passes through is not in the API's answers,
// so it is not drawn either.
type Graph struct {
	Nodes []Node `json:"nodes"`
	Edges []Edge `json:"edges"`
	// Summary is a line for the page's status bar.
	Summary string `json:"summary"`
	// Focus is the Gateway whose contexts alone are drawn, when the whole
	// graph is too large to draw (focus.go); Gateways are the choices.
	Focus    string          `json:"focus,omitempty"`
	Gateways []GatewayChoice `json:"gateways,omitempty"`
}

// Node is one object, or one section of an object (a listener, a rule).
type Node struct {
	ID        string `json:"id"`
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Section   string `json:"section,omitempty"`
	// Label is the text drawn in the node, Base the same text kept for
	// when the page writes an outcome under it.
	Label string `json:"label"`
	Base  string `json:"base"`
	// Outcome is the class of the node's color: enforced, partial, lost,
	// conflict or none (outcomeClass).
	Outcome string `json:"outcome"`
	// Target is set when the node has an EffectivePolicy (a stack to show).
	Target bool `json:"target,omitempty"`
}

// Edge goes from the less specific object to the more specific one.
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// nodeID names an object or section the same way wherever it appears.
func nodeID(group, kind, namespace, name, section string) string {
	id := group + "/" + kind + "/" + namespace + "/" + name
	if section != "" {
		id += "#" + section
	}
	return id
}

func refID(r v1alpha1.ObjectReference) string {
	return nodeID(r.Group, r.Kind, r.Namespace, r.Name, r.SectionName)
}

// graphBuilder collects nodes and edges without duplicates.
type graphBuilder struct {
	nodes map[string]*Node
	edges map[Edge]bool
	// keep, when set, draws only the contexts it keeps (a focus).
	keep func(via []v1alpha1.ObjectReference) bool
}

func newGraphBuilder() *graphBuilder {
	return &graphBuilder{nodes: map[string]*Node{}, edges: map[Edge]bool{}}
}

// ref adds the node of r (and of its object, when r is a section, with
// the edge between them) and returns its id.
func (b *graphBuilder) ref(r v1alpha1.ObjectReference) string {
	obj := nodeID(r.Group, r.Kind, r.Namespace, r.Name, "")
	if b.nodes[obj] == nil {
		label := r.Kind + "\n" + qualified(r.Namespace, r.Name)
		b.nodes[obj] = &Node{ID: obj, Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Label: label, Outcome: "none"}
	}
	if r.SectionName == "" {
		return obj
	}
	id := refID(r)
	if b.nodes[id] == nil {
		label := sectionWord(r.Kind) + " " + r.SectionName
		b.nodes[id] = &Node{ID: id, Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Section: r.SectionName, Label: label, Outcome: "none"}
	}
	b.edge(obj, id)
	return id
}

func (b *graphBuilder) edge(from, to string) {
	if from != to {
		b.edges[Edge{From: from, To: to}] = true
	}
}

// sectionWord is what a section of an object of kind is called.
func sectionWord(kind string) string {
	switch kind {
	case "Gateway", "ListenerSet", "XListenerSet":
		return "listener"
	case "Service", "ServiceImport":
		return "port"
	}
	if strings.HasSuffix(kind, "Route") {
		return "rule"
	}
	return "section"
}

// target adds a target of an EffectivePolicy, its contexts' chains, and
// the outcome of the policies that reach it.
func (b *graphBuilder) target(namespace string, t v1alpha1.Target) bool {
	self := v1alpha1.ObjectReference{Group: t.Group, Kind: t.Kind, Namespace: namespace, Name: t.Name}
	if b.keep != nil && !b.keep([]v1alpha1.ObjectReference{self}) && !keepsAny(b.keep, t) {
		return false
	}
	id := b.ref(self)
	n := b.nodes[id]
	n.Target = true
	var outcomes []v1alpha1.Outcome
	for _, tp := range t.Policies {
		for _, s := range tp.Sources {
			outcomes = append(outcomes, s.Outcome)
		}
		for _, e := range tp.Effective {
			if b.keep == nil || b.keep(e.Via) {
				b.chain(e.Via, self, e.SectionName)
			}
		}
	}
	n.Outcome = outcomeClass(outcomes)
	n.Label = self.Kind + "\n" + qualified(namespace, t.Name) + "\n" + policyLine(outcomes)
	return true
}

// chain adds the edges of a context: each attachment point to the next,
// the last to the target (or the target's section).
func (b *graphBuilder) chain(via []v1alpha1.ObjectReference, self v1alpha1.ObjectReference, section string) {
	prev := ""
	for _, r := range via {
		id := b.ref(r)
		if prev != "" {
			b.edge(prev, id)
		}
		prev = id
	}
	end := b.ref(self)
	if section != "" {
		s := self
		s.SectionName = section
		end = b.ref(s)
	}
	if prev != "" && prev != end && !strings.HasPrefix(prev, end+"#") {
		b.edge(prev, end)
	}
}

// outcomeClass sums up the outcomes of the sources that reach a node as
// one color: any conflict or invalid policy is what a reader must see
// first, then any policy that lost wholly or in part.
func outcomeClass(outcomes []v1alpha1.Outcome) string {
	class := "none"
	rank := map[string]int{"none": 0, "enforced": 1, "lost": 2, "partial": 3, "conflict": 4}
	for _, o := range outcomes {
		c := "enforced"
		switch o {
		case v1alpha1.OutcomePartiallyEnforced:
			c = "partial"
		case v1alpha1.OutcomeOverridden:
			c = "lost"
		case v1alpha1.OutcomeConflicted, v1alpha1.OutcomeInvalid:
			c = "conflict"
		}
		if rank[c] > rank[class] {
			class = c
		}
	}
	return class
}

// policyLine counts the policies of a node by outcome, in words.
func policyLine(outcomes []v1alpha1.Outcome) string {
	count := map[v1alpha1.Outcome]int{}
	for _, o := range outcomes {
		count[o]++
	}
	parts := []string{fmt.Sprintf("%d %s", len(outcomes), plural(len(outcomes), "policy", "policies"))}
	for _, o := range []v1alpha1.Outcome{v1alpha1.OutcomeEnforced, v1alpha1.OutcomePartiallyEnforced, v1alpha1.OutcomeOverridden, v1alpha1.OutcomeConflicted, v1alpha1.OutcomeInvalid} {
		if count[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[o], o))
		}
	}
	return strings.Join(parts, " · ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// BuildGraph draws the EffectivePolicies and ClusterEffectivePolicies objs.
func BuildGraph(objs []runtime.Object) Graph {
	return newGraphBuilder().build(objs)
}

func (b *graphBuilder) build(objs []runtime.Object) Graph {
	targets := 0
	for _, obj := range objs {
		ns, ts := render.TargetsOf(obj)
		for _, t := range ts {
			if b.target(ns, t) {
				targets++
			}
		}
	}
	g := b.graph()
	g.Summary = fmt.Sprintf("%d %s that policies reach, %d objects drawn", targets, plural(targets, "target", "targets"), len(g.Nodes))
	return g
}

// graph is what b collected, nodes and edges sorted.
func (b *graphBuilder) graph() Graph {
	g := Graph{Nodes: make([]Node, 0, len(b.nodes)), Edges: make([]Edge, 0, len(b.edges))}
	for _, n := range b.nodes {
		n.Base = n.Label
		g.Nodes = append(g.Nodes, *n)
	}
	for e := range b.edges {
		g.Edges = append(g.Edges, e)
	}
	sort.Slice(g.Nodes, func(i, j int) bool { return g.Nodes[i].ID < g.Nodes[j].ID })
	sort.Slice(g.Edges, func(i, j int) bool {
		if g.Edges[i].From != g.Edges[j].From {
			return g.Edges[i].From < g.Edges[j].From
		}
		return g.Edges[i].To < g.Edges[j].To
	})
	return g
}

func qualified(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// Stacks are the describe trees of the targets of objs by node id: what a
// click on a node of an --html page shows.
func Stacks(objs []runtime.Object) map[string][]*TreeNode {
	out := map[string][]*TreeNode{}
	for _, obj := range objs {
		ns, ts := render.TargetsOf(obj)
		for _, t := range ts {
			out[nodeID(t.Group, t.Kind, ns, t.Name, "")] = Trees(render.Target(ns, t))
		}
	}
	return out
}
