// Package agree reads the Kuadrant oracle's answer in this project's terms and lists where it and
// the engine's EffectivePolicies disagree.
//
// Kuadrant computes one effective policy per path GatewayClass > Gateway > Listener > Route >
// RouteRule; the engine lists, on each route, one entry per distinct context (its via: the
// attachment points merged, least specific first), with a sectionName when the entry is a rule's
// own. A path is matched to the route entry of its rule (sectionName = the rule's name, unnamed
// rules being rule-<index+1> on both sides) or, when the rule has none, to the route's entry
// without section, among those whose via goes through the path's Gateway, listener and route;
// the most specific such entry wins. Both sides are then read as named entries (Kuadrant's
// MergeablePolicy.Rules(): limits by name, AuthPolicy rules by section and name, the top-level
// `when`) and the policy each came from; entries are never merged inside, so names and sources
// are the whole of the comparison.
package agree

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kuadrant/kuadrantoracle"
)

// Kinds are the Kuadrant kinds whose effective policies Kuadrant computes per path.
var Kinds = []string{"AuthPolicy", "RateLimitPolicy", "TokenRateLimitPolicy"}

// Entries maps a named entry (Kuadrant's rule ID) to the policy ("namespace/name") it came from.
type Entries map[string]string

// RouteEntry is one of the engine's effective entries on a route.
type RouteEntry struct {
	Namespace, Route, Kind string
	Spec                   v1alpha1.EffectiveSpec
	Entries                Entries
}

// Disagreement is one path (or one engine entry no path accounts for) where the two differ.
type Disagreement struct {
	Kind   string  `json:"kind"`
	Path   string  `json:"path"`
	Oracle Entries `json:"oracle,omitempty"`
	Ours   Entries `json:"ours,omitempty"`
	Why    string  `json:"why"`
}

func (d Disagreement) String() string {
	o, _ := json.Marshal(d.Oracle)
	u, _ := json.Marshal(d.Ours)
	return fmt.Sprintf("%s %s: %s (kuadrant %s, ours %s)", d.Kind, d.Path, d.Why, o, u)
}

// RouteEntries lists the engine's effective entries of the Kuadrant kinds on HTTPRoutes and
// GRPCRoutes, from the outputs of compute.ComputeAll.
func RouteEntries(outs map[compute.Key]runtime.Object) ([]RouteEntry, error) {
	var out []RouteEntry
	for key, o := range outs {
		ep, ok := o.(*v1alpha1.EffectivePolicy)
		if !ok {
			continue
		}
		for _, t := range ep.Targets {
			if t.Kind != "HTTPRoute" && t.Kind != "GRPCRoute" {
				continue
			}
			for _, tp := range t.Policies {
				if tp.Group != "kuadrant.io" || !isKind(tp.Kind) {
					continue
				}
				for _, e := range tp.Effective {
					entries, err := OurEntries(tp.Kind, e)
					if err != nil {
						return nil, fmt.Errorf("%s %s %s: %w", key, t.Kind, tp.Kind, err)
					}
					out = append(out, RouteEntry{Namespace: key.Namespace, Route: t.Name, Kind: tp.Kind, Spec: e, Entries: entries})
				}
			}
		}
	}
	return out, nil
}

func isKind(k string) bool {
	for _, x := range Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// Compare matches every path of the oracle's answer to the engine's route entries and returns
// the disagreements, sorted.
func Compare(res *kuadrantoracle.Result, ours []RouteEntry) []Disagreement {
	var ds []Disagreement
	used := make([]bool, len(ours))
	for _, p := range res.Paths {
		want := Entries{}
		for id, r := range p.Rules {
			want[id] = kuadrantoracle.SourceName(r.Source)
		}
		i := match(p, ours)
		if i < 0 {
			ds = append(ds, Disagreement{Kind: p.Kind, Path: p.ID, Oracle: want, Why: "the engine has no entry for this path"})
			continue
		}
		used[i] = true
		if !equal(want, ours[i].Entries) {
			ds = append(ds, Disagreement{Kind: p.Kind, Path: p.ID, Oracle: want, Ours: ours[i].Entries, Why: "different entries or sources"})
		}
	}
	for i, e := range ours {
		if !used[i] {
			ds = append(ds, Disagreement{Kind: e.Kind, Path: describe(e), Ours: e.Entries, Why: "Kuadrant computes no effective policy on any path of this entry"})
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].String() < ds[j].String() })
	return ds
}

func describe(e RouteEntry) string {
	parts := make([]string, 0, len(e.Spec.Via))
	for _, v := range e.Spec.Via {
		s := v.Kind + ":" + v.Name
		if v.SectionName != "" {
			s += "#" + v.SectionName
		}
		parts = append(parts, s)
	}
	route := e.Namespace + "/" + e.Route
	if e.Spec.SectionName != "" {
		route += "#" + e.Spec.SectionName
	}
	return route + " via " + strings.Join(parts, ">")
}

func equal(a, b Entries) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// match returns the index of the engine entry of path p, or -1: an entry of the same kind on the
// path's route, for its rule or for the whole route, whose via stays on the path; the one with the
// rule's section, then the one with the longest via (the context's own entry: the others on the
// path are those of contexts whose policies are a part of its), then the one naming the most
// sections of the path, wins.
func match(p kuadrantoracle.Path, ours []RouteEntry) int {
	var gw, listener, route, rule kuadrantoracle.Node
	for _, n := range p.Path {
		switch n.Kind {
		case "Gateway":
			gw = n
		case "Listener":
			listener = n
		case "HTTPRoute", "GRPCRoute":
			route = n
		case "HTTPRouteRule", "GRPCRouteRule":
			rule = n
		}
	}
	best, bestScore := -1, -1
	for i, e := range ours {
		if e.Kind != p.Kind || e.Namespace != route.Namespace || e.Route != route.Name {
			continue
		}
		if e.Spec.SectionName != "" && e.Spec.SectionName != rule.SectionName {
			continue
		}
		score, ok := viaScore(e, gw, listener, route, rule)
		if !ok {
			continue
		}
		score += 10 * len(e.Spec.Via)
		if e.Spec.SectionName != "" {
			score += 1000
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	return best
}

// viaScore says whether every attachment point of the entry's via lies on the path, and how many
// of them name a section of it.
func viaScore(e RouteEntry, gw, listener, route, rule kuadrantoracle.Node) (int, bool) {
	score := 0
	for _, v := range e.Spec.Via {
		ns := v.Namespace
		switch v.Kind {
		case "Gateway":
			if ns == "" {
				ns = e.Namespace
			}
			if v.Name != gw.Name || ns != gw.Namespace {
				return 0, false
			}
			if v.SectionName != "" {
				if v.SectionName != listener.SectionName {
					return 0, false
				}
				score++
			}
		case "HTTPRoute", "GRPCRoute":
			if v.Name != route.Name {
				return 0, false
			}
			if v.SectionName != "" {
				if v.SectionName != rule.SectionName {
					return 0, false
				}
				score++
			}
		case "GatewayClass":
		default:
			return 0, false
		}
	}
	// An entry merged from route policies alone names no Gateway: it stands for every path of
	// the route.
	return score, true
}

// Match returns the index of the engine entry of path p in ours (the one Compare pairs it with),
// or -1 when the engine has none.
func Match(p kuadrantoracle.Path, ours []RouteEntry) int { return match(p, ours) }

// Describe names an engine entry by its route, section and via, as Compare does when no path
// accounts for it.
func Describe(e RouteEntry) string { return describe(e) }
