package kgateway

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// kgOutput is the part of the kgateway oracle's output the checks read
// (oracles/kgateway/kgatewayoracle Result).
type kgOutput struct {
	Gateways []struct {
		Namespace    string `json:"namespace"`
		Name         string `json:"name"`
		RouteConfigs []struct {
			Name         string    `json:"name"`
			Origins      kgOrigins `json:"origins"`
			VirtualHosts []kgVhost `json:"virtualHosts"`
		} `json:"routeConfigs"`
		Listeners []kgListener `json:"listeners"`
		Clusters  []kgCluster  `json:"clusters"`
	} `json:"gateways"`
}

// kgOrigins: per policy kind, per merge unit, the policies it came from.
type kgOrigins map[string]map[string][]string

type kgVhost struct {
	Name    string    `json:"name"`
	Origins kgOrigins `json:"origins"`
	Retries *uint32   `json:"retries"`
	Routes  []kgRoute `json:"routes"`
}

type kgRoute struct {
	Name    string    `json:"name"`
	Prefix  string    `json:"prefix"`
	Origins kgOrigins `json:"origins"`
	Timeout string    `json:"timeout"`
	Retries *uint32   `json:"retries"`
}

// ruleContext is a route rule through a Gateway's listener.
type ruleContext struct {
	gwNS, gw, listener string
	kind, ns, name     string
	rule               int
}

func (c ruleContext) String() string {
	return fmt.Sprintf("%s %s/%s rule %d via Gateway %s/%s listener %s", c.kind, c.ns, c.name, c.rule, c.gwNS, c.gw, c.listener)
}

// kgTPOrigins is the TrafficPolicy key of the merge-origin metadata.
const kgTPOrigins = gen.TP + "." + gen.KgatewayGroup

// Compare: every route rule kgateway programs, through each listener.
func (kgateway) Compare(objs []*unstructured.Unstructured, ours *differential.Ours, out []byte) ([]differential.Check, error) {
	var o kgOutput
	if err := json.Unmarshal(out, &o); err != nil {
		return nil, fmt.Errorf("kgateway oracle output: %w", err)
	}
	seen := map[ruleContext]bool{}
	seenCluster := map[string]bool{}
	var checks []differential.Check
	for _, gw := range o.Gateways {
		for _, l := range gw.Listeners {
			cs, err := kgListenerChecks(objs, ours, gw.Namespace, gw.Name, l)
			if err != nil {
				return nil, err
			}
			checks = append(checks, cs...)
		}
		for _, c := range gw.Clusters {
			if seenCluster[c.Name] {
				continue
			}
			seenCluster[c.Name] = true
			cs, err := kgClusterChecks(ours, c)
			if err != nil {
				return nil, err
			}
			checks = append(checks, cs...)
		}
		for _, rc := range gw.RouteConfigs {
			listener, ok := listenerOfPort(objs, gw.Namespace, gw.Name, rc.Name)
			if !ok {
				continue
			}
			for _, vh := range rc.VirtualHosts {
				for _, r := range vh.Routes {
					ns, name, rule, ok := parseRulePath(r.Prefix)
					if !ok {
						continue
					}
					ctx := ruleContext{gwNS: gw.Namespace, gw: gw.Name, listener: listener,
						kind: "HTTPRoute", ns: ns, name: name, rule: rule}
					if seen[ctx] || parentPreferred(objs, ns, name) {
						continue
					}
					seen[ctx] = true
					cs, err := kgRuleChecks(objs, ours, ctx, rc.Origins, vh, r)
					if err != nil {
						return nil, err
					}
					checks = append(checks, cs...)
				}
			}
		}
	}
	return checks, nil
}

// listenerOfPort names the listener of Gateway ns/name whose port the route
// configuration ("listener~<port>") serves: the generator gives each
// listener of a Gateway a port of its own.
func listenerOfPort(objs []*unstructured.Unstructured, ns, name, routeConfig string) (string, bool) {
	port, ok := strings.CutPrefix(routeConfig, "listener~")
	if !ok {
		return "", false
	}
	for _, o := range objs {
		if o.GetKind() != "Gateway" || o.GetNamespace() != ns || o.GetName() != name {
			continue
		}
		ls, _, _ := unstructured.NestedSlice(o.Object, "spec", "listeners")
		for _, l := range ls {
			m, _ := l.(map[string]any)
			if fmt.Sprint(m["port"]) == port {
				n, _ := m["name"].(string)
				return n, true
			}
		}
	}
	return "", false
}

// parseRulePath reads the path prefix the generator gives rule i of route
// ns/name (gen.KgatewayRulePath).
func parseRulePath(prefix string) (ns, name string, rule int, ok bool) {
	parts := strings.Split(strings.TrimPrefix(prefix, "/"), "/")
	if len(parts) != 3 {
		return "", "", 0, false
	}
	i, err := strconv.Atoi(parts[2])
	if err != nil || gen.KgatewayRulePath(parts[0], parts[1], i) != prefix {
		return "", "", 0, false
	}
	return parts[0], parts[1], i, true
}

// kgRuleChecks compares, for one route rule through one listener, the
// policy each generated merge unit came from, and the timeout and retry
// count Envoy is given. kgateway's unit comes from the route's merged
// policies (its rule's and route's) when they set it, else from the
// virtual host's (the listener's and Gateway's: Envoy's per-route config
// replaces the virtual host's filter by filter, and a route retry policy
// the virtual host's), else from the route configuration's.
func kgRuleChecks(objs []*unstructured.Unstructured, ours *differential.Ours, rc ruleContext, rcOrigins kgOrigins, vh kgVhost, r kgRoute) ([]differential.Check, error) {
	ruleName := differential.RuleName(objs, rc.kind, rc.ns, rc.name, rc.rule)
	path := []differential.Node{{Kind: "Gateway", Namespace: rc.gwNS, Name: rc.gw}, {Kind: "Gateway", Namespace: rc.gwNS, Name: rc.gw, Section: rc.listener}}
	path = append(path, delegatingRules(objs, rc.ns, rc.name)...)
	path = append(path, differential.Node{Kind: rc.kind, Namespace: rc.ns, Name: rc.name})
	if ruleName != "" {
		path = append(path, differential.Node{Kind: rc.kind, Namespace: rc.ns, Name: rc.name, Section: ruleName})
	}
	target := differential.Node{Kind: rc.kind, Namespace: rc.ns, Name: rc.name, Section: ruleName}
	spec, sources, err := ours.Effective(target, gen.KgatewayGroup, gen.TP, path)
	if err != nil {
		return nil, err
	}
	mk := func(field, theirs, oursV string) differential.Check {
		return differential.Check{Kind: gen.TP, Subject: rc.String(), Field: field, Theirs: theirs, Ours: oursV, Target: target, Path: path}
	}
	var checks []differential.Check
	for _, u := range gen.KgatewayUnits {
		key := unitKey(u.Pointer)
		theirs := r.Origins[kgTPOrigins][key]
		if theirs == nil && !kgRouteOnly[key] {
			theirs = vh.Origins[kgTPOrigins][key]
			if theirs == nil {
				theirs = rcOrigins[kgTPOrigins][key]
			}
		}
		checks = append(checks, mk(u.Pointer, originNames(theirs), unitSources(sources, u.Pointer)))
	}
	e := differential.EffectiveSpec{Spec: spec, Sources: sources}
	retries := r.Retries
	if retries == nil {
		retries = vh.Retries
	}
	theirRetries := ""
	if retries != nil {
		theirRetries = strconv.FormatUint(uint64(*retries), 10)
	}
	checks = append(checks,
		mk("/timeouts/request", differential.Duration(r.Timeout), differential.Duration(e.Value("/timeouts/request"))),
		mk("/retry/attempts", theirRetries, e.Value("/retry/attempts")))
	return checks, nil
}

// originNames turns merge origins ("<group>/<Kind>/<namespace>/<name>") into
// "namespace/name", sorted, comma-separated.
func originNames(refs []string) string {
	out := make([]string, 0, len(refs))
	for _, ref := range refs {
		parts := strings.Split(ref, "/")
		if len(parts) >= 2 {
			ref = parts[len(parts)-2] + "/" + parts[len(parts)-1]
		}
		out = append(out, ref)
	}
	return joinSorted(out)
}

// unitSources is the policies our fieldSources give the leaves of a unit.
func unitSources(sources map[string]string, pointer string) string {
	var out []string
	for k, v := range sources {
		if k == pointer || strings.HasPrefix(k, pointer+"/") {
			out = append(out, v)
		}
	}
	return joinSorted(out)
}

func joinSorted(xs []string) string {
	sort.Strings(xs)
	var out []string
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return strings.Join(out, ",")
}

// delegatingRules are the route and rule (when named) that delegate to
// HTTPRoute ns/name, the generator's one level of delegation: a rule whose
// backendRef is that route.
func delegatingRules(objs []*unstructured.Unstructured, ns, name string) []differential.Node {
	for _, o := range objs {
		if o.GetKind() != "HTTPRoute" {
			continue
		}
		rules, _, _ := unstructured.NestedSlice(o.Object, "spec", "rules")
		for _, r := range rules {
			rule, _ := r.(map[string]any)
			refs, _ := rule["backendRefs"].([]any)
			for _, ref := range refs {
				m, _ := ref.(map[string]any)
				refNS, _ := m["namespace"].(string)
				if refNS == "" {
					refNS = o.GetNamespace()
				}
				if m["kind"] != "HTTPRoute" || m["name"] != name || refNS != ns {
					continue
				}
				out := []differential.Node{{Kind: "HTTPRoute", Namespace: o.GetNamespace(), Name: o.GetName()}}
				if n, _ := rule["name"].(string); n != "" {
					out = append(out, differential.Node{Kind: "HTTPRoute", Namespace: o.GetNamespace(), Name: o.GetName(), Section: n})
				}
				return out
			}
		}
	}
	return nil
}

// parentPreferred says whether HTTPRoute ns/name delegates and prefers its
// own policies to its children's (kgateway.dev/inherited-policy-priority
// ShallowMergePreferParent or DeepMergePreferParent). Such a route's own
// rules are not compared: runRoutePlugins marks the route's policies as a
// delegating parent's (ir.AttachedPolicies.AppendWithPriority sets
// HierarchicalPriority in place, on the slice the route's own rules share)
// whenever a child's routes are translated first, so on the route's own
// rules its route-level policies then beat its rule-level ones, on one
// listener and not on the next (docs/differential.md, seed 104).
func parentPreferred(objs []*unstructured.Unstructured, ns, name string) bool {
	for _, o := range objs {
		if o.GetKind() != "HTTPRoute" || o.GetNamespace() != ns || o.GetName() != name {
			continue
		}
		switch o.GetAnnotations()[gen.PriorityAnnotation] {
		case "ShallowMergePreferParent", "DeepMergePreferParent":
		default:
			return false
		}
		rules, _, _ := unstructured.NestedSlice(o.Object, "spec", "rules")
		for _, r := range rules {
			rule, _ := r.(map[string]any)
			refs, _ := rule["backendRefs"].([]any)
			for _, ref := range refs {
				if m, _ := ref.(map[string]any); m["kind"] == "HTTPRoute" {
					return true
				}
			}
		}
	}
	return false
}
