package ui

import (
	"strings"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/render"
)

// AfterGraph is what a change reaches for the first time, drawn as it
// would be, and each new target's describe tree after the change (what a
// click on it shows: it has no EffectivePolicy yet to ask for).
type AfterGraph struct {
	Graph
	Stacks map[string][]*TreeNode `json:"stacks"`
}

// afterGraph draws the targets a change reaches for the first time (in
// an EffectivePolicy's after-state and not in its before-state: a new
// route, or an object no policy reached before) as they would be: each
// with its contexts' chains, its outcome and its policy line after the
// change. The page has no node for most of them (the graph draws what
// the API answers today), so it adds these, marked as new. With a focus
// (a Gateway's id, as the graph sends it), only the contexts through that
// Gateway are drawn, as the graph itself draws them.
func afterGraph(changes []v1alpha1.EffectivePolicyChange, focus v1alpha1.ObjectReference) AfterGraph {
	b := newGraphBuilder()
	stacks := map[string][]*TreeNode{}
	if focus.Name != "" {
		b.keep = throughGateway(focus)
	}
	for _, c := range changes {
		before := map[string]bool{}
		for _, t := range c.Before.Targets {
			before[t.Group+"/"+t.Kind+"/"+t.Name] = true
		}
		for _, t := range c.After.Targets {
			if !before[t.Group+"/"+t.Kind+"/"+t.Name] && b.target(c.Namespace, t) {
				stacks[nodeID(t.Group, t.Kind, c.Namespace, t.Name, "")] = Trees(render.Target(c.Namespace, t))
			}
		}
	}
	return AfterGraph{Graph: b.graph(), Stacks: stacks}
}

// focusRef reads the id of the Gateway the page draws (nodeID's form:
// group/Gateway/namespace/name); "" is no focus.
func focusRef(id string) (v1alpha1.ObjectReference, error) {
	if id == "" {
		return v1alpha1.ObjectReference{}, nil
	}
	parts := strings.Split(id, "/")
	if len(parts) != 4 || parts[1] != "Gateway" || parts[3] == "" {
		return v1alpha1.ObjectReference{}, badRequest("gateway: %q is not a Gateway of the graph (group/Gateway/namespace/name)", id)
	}
	return v1alpha1.ObjectReference{Group: parts[0], Kind: parts[1], Namespace: parts[2], Name: parts[3]}, nil
}
