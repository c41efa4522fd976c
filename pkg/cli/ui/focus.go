package ui

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/render"
)

// focusAbove is the number of targets above which the page draws one
// Gateway at a time: the whole scale-1 topology (40,000 targets, 42,000
// objects, 314,000 edges) is 46 MB of JSON that no browser lays out in
// any time a reader would wait, while its busiest Gateway's contexts are
// about 1,000 objects (docs/ui.md, "Speed").
const focusAbove = 400

// GatewayChoice is one Gateway the page may focus on.
type GatewayChoice struct {
	ID     string `json:"id"`
	Label  string `json:"label"`
	Routes int    `json:"routes"`
}

// gatewayRef is a Gateway named in a context, whatever its section.
func gatewayRef(r v1alpha1.ObjectReference) (v1alpha1.ObjectReference, bool) {
	if r.Kind != "Gateway" {
		return r, false
	}
	r.SectionName = ""
	return r, true
}

// throughGateway keeps the contexts that pass through gw (the Gateway or
// one of its listeners).
func throughGateway(gw v1alpha1.ObjectReference) func([]v1alpha1.ObjectReference) bool {
	return func(via []v1alpha1.ObjectReference) bool {
		for _, r := range via {
			if g, ok := gatewayRef(r); ok && g == gw {
				return true
			}
		}
		return false
	}
}

// keepsAny is whether keep keeps any context of t.
func keepsAny(keep func([]v1alpha1.ObjectReference) bool, t v1alpha1.Target) bool {
	for _, tp := range t.Policies {
		for _, e := range tp.Effective {
			if keep(e.Via) {
				return true
			}
		}
	}
	return false
}

// gatewayChoices are the Gateways of objs' contexts, the one with the most
// routes first, each with the number of routes whose contexts pass through
// it; refs maps their ids to them.
func gatewayChoices(objs []runtime.Object) (choices []GatewayChoice, refs map[string]v1alpha1.ObjectReference, targets int) {
	refs = map[string]v1alpha1.ObjectReference{}
	routes := map[string]map[string]bool{}
	for _, obj := range objs {
		ns, ts := render.TargetsOf(obj)
		for _, t := range ts {
			targets++
			self := v1alpha1.ObjectReference{Group: t.Group, Kind: t.Kind, Namespace: ns, Name: t.Name}
			if gw, ok := gatewayRef(self); ok {
				refs[refID(gw)] = gw
			}
			for _, tp := range t.Policies {
				for _, e := range tp.Effective {
					for _, r := range e.Via {
						gw, ok := gatewayRef(r)
						if !ok {
							continue
						}
						id := refID(gw)
						refs[id] = gw
						if strings.HasSuffix(t.Kind, "Route") {
							if routes[id] == nil {
								routes[id] = map[string]bool{}
							}
							routes[id][refID(self)] = true
						}
					}
				}
			}
		}
	}
	for id, gw := range refs {
		n := len(routes[id])
		choices = append(choices, GatewayChoice{ID: id, Label: fmt.Sprintf("%s · %d %s", qualified(gw.Namespace, gw.Name), n, plural(n, "route", "routes")), Routes: n})
	}
	sort.Slice(choices, func(i, j int) bool {
		if choices[i].Routes != choices[j].Routes {
			return choices[i].Routes > choices[j].Routes
		}
		return choices[i].ID < choices[j].ID
	})
	return choices, refs, targets
}

// graphFor draws objs: the whole graph while it is small, else the
// contexts of one Gateway, focus (a node id) or, when focus is "", the one
// with the most routes; a focus the graph has no Gateway of is an error.
func graphFor(objs []runtime.Object, focus string) (Graph, error) {
	choices, refs, targets := gatewayChoices(objs)
	if focus == "" && (targets <= focusAbove || len(choices) == 0) {
		return BuildGraph(objs), nil
	}
	if focus == "" {
		focus = choices[0].ID
	}
	gw, ok := refs[focus]
	if !ok {
		return Graph{}, notFound("no Gateway %s in the graph", focus)
	}
	b := newGraphBuilder()
	b.keep = throughGateway(gw)
	g := b.build(objs)
	g.Focus, g.Gateways = focus, choices
	g.Summary = fmt.Sprintf("Gateway %s: %s of %d targets in all (one Gateway at a time: choose it above)", qualified(gw.Namespace, gw.Name), g.Summary, targets)
	return g, nil
}

// graphOf is the graph focused on focus (graphFor). The cluster is read
// from the server's one list and watch (store.go), with the user's
// credentials: at scale 1 a list of every EffectivePolicy costs about 20
// seconds, and the page asks again for each Gateway chosen. A source that
// cannot change (--offline: no Watcher) is listed once. Either way a graph
// is drawn once per version of the items and focus (graphCache).
func (s *Server) graphOf(ctx context.Context, focus string) (*cachedGraph, error) {
	if _, live := s.opts.Source.(Watcher); live {
		run, err := s.store.get(ctx, s.life)
		if err != nil {
			return nil, err
		}
		return run.graph(focus)
	}
	objs, err := s.fixedObjects(ctx)
	if err != nil {
		return nil, err
	}
	return s.fixedGraphs.get(objs, 0, focus)
}

// fixedObjects are the EffectivePolicies of a source that cannot change,
// listed once.
func (s *Server) fixedObjects(ctx context.Context) ([]runtime.Object, error) {
	s.fixedMu.Lock()
	defer s.fixedMu.Unlock()
	if s.fixed != nil {
		return s.fixed, nil
	}
	lists, err := s.listBoth(ctx, s.opts.Source.EffectivePolicies)
	if err != nil {
		return nil, err
	}
	s.fixed = render.Items(lists...)
	return s.fixed, nil
}
