package render

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/tree"
)

// Trace is the answer of a RequestTrace: the request, then per Gateway
// each listener that takes it, the route and rule chosen, the rule's
// policies per kind and its backends with theirs.
func Trace(rt *v1alpha1.RequestTrace) *tree.Node {
	n := tree.New(tree.S(tree.Heading, requestLine(rt.Spec)))
	st := rt.Status
	if st.Message != "" {
		n.Add(tree.S(tree.Warn, st.Message))
	}
	var gw *tree.Node
	for i, m := range st.Matches {
		if i == 0 || m.Gateway != st.Matches[i-1].Gateway {
			gw = n.Add(tree.P(Ref(m.Gateway)))
		}
		gw.Append(matchNode(m))
	}
	if st.HiddenMatches > 0 {
		n.Add(tree.S(tree.Muted, "the request is also taken by "+plural(st.HiddenMatches, "Gateway")+" in namespaces where you may not get effectivepolicies"))
	}
	return n
}

// requestLine writes the request as one line: method, host, path, and what
// else was asked.
func requestLine(s v1alpha1.RequestTraceSpec) string {
	r := s.Request
	method := r.Method
	if method == "" {
		method = "GET"
		if r.GRPC {
			method = "POST"
		}
	}
	path := r.Path
	if path == "" {
		path = "/"
	}
	parts := []string{method, r.Host + path}
	if s.Port != 0 {
		parts = append(parts, "port "+strconv.Itoa(int(s.Port)))
	}
	if r.Protocol != "" {
		parts = append(parts, r.Protocol)
	}
	if r.GRPC {
		parts = append(parts, "gRPC")
	}
	parts = append(parts, pairs("header", r.Headers)...)
	parts = append(parts, pairs("query", r.QueryParams)...)
	if g := s.Gateway; g != nil {
		parts = append(parts, "through Gateway "+qualified(g.Namespace, g.Name))
	}
	return strings.Join(parts, " ")
}

func pairs(what string, m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = what + " " + k + "=" + m[k]
	}
	return out
}

// matchNode is one listener that takes the request and what it does with it.
func matchNode(m v1alpha1.TraceMatch) *tree.Node {
	n := tree.New(listenerLine(m)...)
	if m.Message != "" {
		n.Add(tree.P(m.Message))
	}
	if m.Route == nil {
		return n
	}
	route := n.Add(tree.P(Ref(*m.Route)))
	if m.Rule == nil {
		return n
	}
	rule := route.Add(tree.P(ruleLine(*m.Rule)))
	for _, p := range m.Policies {
		rule.Append(tracePolicy(p).node())
	}
	for _, b := range m.Backends {
		bn := rule.Add(backendLine(b)...)
		if b.Message != "" {
			bn.Add(tree.S(tree.Warn, b.Message))
		}
		for _, p := range m.BackendPolicies {
			if p.Backend != nil && sameBackend(*p.Backend, b.Ref) {
				bn.Append(backendPolicyNode(p, m.Policies))
			}
		}
	}
	if m.HiddenBackends > 0 {
		rule.Add(tree.S(tree.Muted, plural(m.HiddenBackends, "more backend")+" in namespaces where you may not get effectivepolicies"))
	}
	return n
}

func listenerLine(m v1alpha1.TraceMatch) []tree.Span {
	l := "listener " + m.Listener
	if m.Listener == "" {
		l = "no listener"
	}
	if m.ListenerSet != nil {
		l += " of " + Ref(*m.ListenerSet)
	}
	var detail []string
	if m.Port != 0 {
		detail = append(detail, "port "+strconv.Itoa(int(m.Port)))
	}
	if m.Protocol != "" {
		detail = append(detail, m.Protocol)
	}
	if m.HostnameMatching != "" {
		detail = append(detail, m.HostnameMatching)
	}
	line := []tree.Span{tree.P(l)}
	if len(detail) > 0 {
		line = append(line, tree.S(tree.Muted, " ("+strings.Join(detail, ", ")+")"))
	}
	style := tree.Warn
	if m.Reason == "Matched" {
		style = tree.Good
	}
	return append(line, tree.P("  "), tree.S(style, m.Reason))
}

func ruleLine(r v1alpha1.TraceRule) string {
	s := "rule " + strconv.Itoa(int(r.Index))
	if r.Name != "" {
		s += " " + r.Name
	}
	if r.MatchIndex >= 0 {
		s += fmt.Sprintf(" (match %d)", r.MatchIndex)
	}
	return s
}

func backendLine(b v1alpha1.TraceBackend) []tree.Span {
	s := "backend " + Ref(b.Ref)
	if b.Port != nil {
		s += " port " + strconv.Itoa(int(*b.Port))
	}
	return []tree.Span{tree.P(s), tree.S(tree.Muted, fmt.Sprintf(" (weight %d)", b.Weight))}
}

// sameBackend: a backend policy names its backend as the backend's ref
// does, possibly down to a port section.
func sameBackend(policyBackend, ref v1alpha1.ObjectReference) bool {
	policyBackend.SectionName, ref.SectionName = "", ""
	return policyBackend == ref
}

// backendPolicyNode is a backend's entry of a policy kind; one that is the
// rule's entry over again (no policy attached below the rule, the same
// verdicts) says so instead of repeating it.
func backendPolicyNode(p v1alpha1.TracePolicy, rule []v1alpha1.TracePolicy) *tree.Node {
	p.Backend = nil
	for _, r := range rule {
		if reflect.DeepEqual(p, r) {
			line := []tree.Span{tree.S(tree.Kind, kindName(p.Group, p.Kind)), tree.S(tree.Muted, "  "+string(p.Class)+", ")}
			if p.Semantics == v1alpha1.SemanticsAssumed { // said in full on the rule's entry
				line = append(line, tree.S(tree.Warn, "semantics assumed"), tree.S(tree.Muted, ", "))
			}
			return tree.New(append(line, tree.S(tree.Muted, "as for the rule"))...)
		}
	}
	return tracePolicy(p).node()
}

func tracePolicy(p v1alpha1.TracePolicy) policyKind {
	return policyKind{
		group: p.Group, kind: p.Kind, class: p.Class, semantics: p.Semantics, sources: p.Sources,
		effective: []v1alpha1.EffectiveSpec{{Via: p.Via, SectionName: p.SectionName, Spec: p.Spec, FieldSources: p.FieldSources}},
	}
}
