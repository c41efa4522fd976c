package envoygateway

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// egField is one compared field: where the generator sets it in the
// policy's spec (pointer) and how to read the value Envoy Gateway's IR ends
// up with (ir).
type egField struct {
	kind    string
	pointer string
	ir      func(r egRoute) string
}

// egRouteFields are the route settings compared. Each is set by the
// generator (gen.Fields) to a value naming its policy.
var egRouteFields = []egField{
	{gen.BTP, "/timeout/tcp/connectTimeout", func(r egRoute) string {
		return differential.Duration(dig(r.Traffic, "timeout", "tcp", "connectTimeout"))
	}},
	{gen.BTP, "/timeout/http/connectionIdleTimeout", func(r egRoute) string {
		return differential.Duration(dig(r.Traffic, "timeout", "http", "connectionIdleTimeout"))
	}},
	{gen.BTP, "/loadBalancer/type", func(r egRoute) string { return lbType(dig(r.Traffic, "loadBalancer")) }},
	{gen.SP, "/cors/maxAge", func(r egRoute) string { return differential.Duration(dig(r.Security, "cors", "maxAge")) }},
	{gen.SP, "/authorization/defaultAction", func(r egRoute) string { return differential.Scalar(dig(r.Security, "authorization", "defaultAction")) }},
	{gen.EEP, "/extProc", func(r egRoute) string { return extProcSources(dig(r.EnvoyExtensions, "extProcs")) }},
}

// routeContext is one route rule through one listener, as the IR lists it.
type routeContext struct {
	gwNS, gw, listener string
	kind, ns, name     string
	rule               int
}

func (c routeContext) String() string {
	return fmt.Sprintf("%s %s/%s rule %d via Gateway %s/%s listener %s", c.kind, c.ns, c.name, c.rule, c.gwNS, c.gw, c.listener)
}

// egRouteChecks compares every route rule the IR has, through each
// listener, field by field.
func egRouteChecks(objs []*unstructured.Unstructured, ours *differential.Ours, o *egOutput) ([]differential.Check, error) {
	seen := map[routeContext]bool{}
	var checks []differential.Check
	for _, key := range slices.Sorted(maps.Keys(o.XdsIR)) {
		for _, l := range o.XdsIR[key].HTTP {
			if l.Metadata.Kind != "Gateway" {
				continue
			}
			for _, r := range l.Routes {
				rc, ok := parseRouteName(r, l.Metadata)
				if !ok || seen[rc] {
					continue
				}
				seen[rc] = true
				cs, err := routeChecks(objs, ours, rc, r)
				if err != nil {
					return nil, err
				}
				checks = append(checks, cs...)
			}
		}
	}
	return checks, nil
}

// parseRouteName reads "httproute/<ns>/<name>/rule/<i>/match/..." and the listener's metadata.
func parseRouteName(r egRoute, l egMeta) (routeContext, bool) {
	parts := strings.Split(r.Name, "/")
	if len(parts) < 5 || parts[3] != "rule" {
		return routeContext{}, false
	}
	i, err := strconv.Atoi(parts[4])
	if err != nil {
		return routeContext{}, false
	}
	return routeContext{gwNS: l.Namespace, gw: l.Name, listener: l.SectionName,
		kind: r.Metadata.Kind, ns: parts[1], name: parts[2], rule: i}, true
}

func routeChecks(objs []*unstructured.Unstructured, ours *differential.Ours, rc routeContext, r egRoute) ([]differential.Check, error) {
	return fieldChecks(objs, ours, rc, r, egRouteFields)
}

// fieldChecks compares fields of one route rule in one context.
func fieldChecks(objs []*unstructured.Unstructured, ours *differential.Ours, rc routeContext, r egRoute, fields []egField) ([]differential.Check, error) {
	ruleName := differential.RuleName(objs, rc.kind, rc.ns, rc.name, rc.rule)
	path := []differential.Node{{Kind: "Gateway", Namespace: rc.gwNS, Name: rc.gw}, {Kind: "Gateway", Namespace: rc.gwNS, Name: rc.gw, Section: rc.listener},
		{Kind: rc.kind, Namespace: rc.ns, Name: rc.name}}
	if ruleName != "" {
		path = append(path, differential.Node{Kind: rc.kind, Namespace: rc.ns, Name: rc.name, Section: ruleName})
	}
	target := differential.Node{Kind: rc.kind, Namespace: rc.ns, Name: rc.name, Section: ruleName}
	specs := map[string]differential.EffectiveSpec{}
	var checks []differential.Check
	for _, f := range fields {
		e, ok := specs[f.kind]
		if !ok {
			spec, sources, err := ours.Effective(target, gen.EGGroup, f.kind, path)
			if err != nil {
				return nil, err
			}
			e = differential.EffectiveSpec{Spec: spec, Sources: sources}
			specs[f.kind] = e
		}
		checks = append(checks, differential.Check{Kind: f.kind, Subject: rc.String(), Field: f.pointer,
			Theirs: f.ir(r), Ours: e.Value(f.pointer), Target: target, Path: path})
	}
	return checks, nil
}

// egListenerChecks compares the ClientTrafficPolicy settings of every HTTP listener.
func egListenerChecks(ours *differential.Ours, o *egOutput) ([]differential.Check, error) {
	var checks []differential.Check
	for _, key := range slices.Sorted(maps.Keys(o.XdsIR)) {
		for _, l := range o.XdsIR[key].HTTP {
			m := l.Metadata
			if m.Kind != "Gateway" {
				continue
			}
			path := []differential.Node{{Kind: "Gateway", Namespace: m.Namespace, Name: m.Name}, {Kind: "Gateway", Namespace: m.Namespace, Name: m.Name, Section: m.SectionName}}
			spec, sources, err := ours.Effective(path[1], gen.EGGroup, gen.CTP, path)
			if err != nil {
				return nil, err
			}
			checks = append(checks, differential.Check{Kind: gen.CTP, Field: "/timeout/http/idleTimeout",
				Subject: fmt.Sprintf("Gateway %s/%s listener %s", m.Namespace, m.Name, m.SectionName),
				Theirs:  differential.Duration(dig(l.Timeout, "http", "idleTimeout")),
				Ours:    differential.EffectiveSpec{Spec: spec, Sources: sources}.Value("/timeout/http/idleTimeout"), Target: path[1], Path: path})
		}
	}
	return checks, nil
}

// egStatusChecks compares, for every policy, whether it lost a same-target
// conflict: Envoy Gateway's Accepted=False with reason Conflicted on any
// ancestor, our Conflicted outcome on any target.
func egStatusChecks(objs []*unstructured.Unstructured, ours *differential.Ours, o *egOutput) []differential.Check {
	theirs := map[string][]differential.Node{}
	for _, list := range [][]egPolicy{o.BackendTrafficPolicies, o.SecurityPolicies, o.ClientTrafficPolicies, o.EnvoyExtensionPolicies} {
		for _, p := range list {
			for _, a := range p.Status.Ancestors {
				for _, c := range a.Conditions {
					if c.Type == "Accepted" && c.Status == "False" && c.Reason == "Conflicted" {
						id := p.Metadata.Namespace + "/" + p.Metadata.Name
						r := a.AncestorRef
						theirs[id] = append(theirs[id], differential.Node{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Section: r.SectionName})
					}
				}
			}
		}
	}
	outcomes := ours.Outcomes(gen.EGGroup)
	var checks []differential.Check
	for _, p := range objs {
		if p.GroupVersionKind().Group != gen.EGGroup {
			continue
		}
		id := p.GetNamespace() + "/" + p.GetName()
		c := differential.Check{Kind: p.GetKind(), Subject: "policy " + id, Field: "Conflicted", Policy: id, At: theirs[id]}
		if len(theirs[id]) > 0 {
			c.Theirs = "Conflicted"
		}
		for _, out := range outcomes[id] {
			if out == "Conflicted" {
				c.Ours = "Conflicted"
			}
		}
		checks = append(checks, c)
	}
	return checks
}
