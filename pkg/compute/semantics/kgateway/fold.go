package kgateway

// How the policies of one context combine, from kgateway v2.2.0:
//
//   - pkg/kgateway/translator/irtranslator/route.go runRoutePlugins: a route rule's policies, then
//     its route's, are merged together (pkg/pluginsdk/policy/merge.go MergePolicies, one
//     hierarchy level: AugmentedShallowMerge, a merge unit already set is kept), so a rule
//     policy beats a route policy unit by unit; ComputeRouteConfiguration merges a listener's
//     policies, then its ListenerSet's (krtcollections/policy.go puts those on each of its
//     listeners), then the Gateway's, the same way, into the route configuration's per-filter
//     config, which Envoy's per-route config replaces filter by filter: the route side beats
//     the Gateway side unit by unit. So every unit comes from the first entry that sets it, the
//     more specific level first and at one level in getTargetingPoliciesMaybeForBackends' order.
//   - handlePerRoutePolicies applies timeouts, urlRewrite and autoHostRewrite on routes only
//     and ApplyRouteConfigPlugin never does, so a Gateway or listener TrafficPolicy's are never
//     applied; retry is applied on a listener's virtual host (ApplyVhostPlugin), and the CRD
//     forbids it on a whole Gateway.
//   - the merge units are the fields each merge function handles (trafficpolicy/merge.go
//     MergeTrafficPolicies: a top-level field, rateLimit and compression per sub-field;
//     listenerpolicy/merge.go and merge_http.go: each listener setting, perPort per port).
//   - kgateway.dev/inherited-policy-priority (api/annotations/policy.go) is read on HTTPRoutes
//     only (krtcollections/policy.go getInheritedPolicyPriority) and changes the merge only
//     across a delegation chain (a delegating parent route's policies get a lower
//     HierarchicalPriority in runRoutePlugins; merge.go GetMergeStrategy gives
//     AugmentedShallowMerge within one level whatever the annotation says): delegation.go.
//   - BackendConfigPolicy has no MergePolicies: irtranslator/backend.go runs processBackend for
//     every policy of the backend in order, each overwriting the cluster fields it sets, so
//     each unit comes from the last entry that sets it.

import (
	"sort"
	"strconv"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// httpSettings are the listener HTTP settings, each merged whole (listenerpolicy/merge_http.go).
var httpSettings = []string{
	"accessLog", "tracing", "upgradeConfig", "useRemoteAddress", "preserveExternalRequestId",
	"generateRequestId", "xffNumTrustedHops", "serverHeaderTransformation", "streamIdleTimeout",
	"idleTimeout", "healthCheck", "preserveHttp1HeaderCase", "acceptHttp10", "defaultHostForHttp10",
	"earlyRequestHeaderModifier", "maxRequestHeadersKb",
}

func prefixed(p string, fs []string) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = p + f
	}
	return out
}

// mergeUnits are, per kind, the fields (in the spec proper) kgateway merges whole.
var mergeUnits = map[string][]string{
	"TrafficPolicy": {
		"transformation", "extProc", "extAuth", "rateLimit.local", "rateLimit.global", "cors", "csrf",
		"headerModifiers", "buffer", "timeouts", "retry", "rbac", "jwtAuth", "urlRewrite",
		"compression.responseCompression", "compression.requestDecompression", "basicAuth", "apiKeyAuth", "oauth2",
	},
	"HTTPListenerPolicy": httpSettings,
	"ListenerPolicy":     append([]string{"default.proxyProtocol"}, prefixed("default.httpSettings.", httpSettings)...),
	"BackendConfigPolicy": {
		"tcpKeepalive", "commonHttpProtocolOptions", "http1ProtocolOptions", "http2ProtocolOptions", "tls",
		"loadBalancer", "healthCheck", "outlierDetection", "circuitBreakers",
	},
}

// routeOnly are the TrafficPolicy fields kgateway applies from route and rule policies only
// (handlePerRoutePolicies); retry is left out of a whole Gateway's by the CRD already.
var routeOnly = []string{"timeouts", "urlRewrite", "autoHostRewrite"}

const weightAnnotation = "kgateway.dev/policy-weight"

// Fold (semantics.Profile): every merge unit from the first entry in kgateway's order that
// sets it (the last one for BackendConfigPolicy); across a delegation chain as each
// delegating route's inherited-policy-priority says (delegation.go).
func (Profile) Fold(es []semantics.FoldEntry, _ string) semantics.FoldValue {
	order := priorityOrder(es)
	if len(order) == 0 {
		return semantics.FoldValue{}
	}
	kind := es[0].Policy.ID.GK.Kind
	var seq []patch
	if kind == "TrafficPolicy" {
		seq = chainSequence(es, order)
	} else {
		for j := len(order) - 1; j >= 0; j-- {
			seq = append(seq, patch{order[j], applied(kind, es[order[j]])})
		}
	}
	var acc *merge.Value
	for _, p := range seq { // the lowest priority first, each one above patching it
		acc = merge.Patch(acc, merge.StripNulls(merge.Build(p.spec, p.entry, es[p.entry].Entry.Schema)))
	}
	return semantics.FoldValue{Acc: acc}
}

// patch is the part of an entry's spec applied at one point of a fold.
type patch struct {
	entry int
	spec  map[string]interface{}
}

// chainSequence orders a TrafficPolicy context's entries as kgateway applies them, the
// lowest priority first: the Gateway side below every route, then the routes of the
// delegation chain, each delegating route's entries below or above those of the routes it
// delegates to as its mode says (parentOverrides); within a route, the order of order.
func chainSequence(es []semantics.FoldEntry, order []int) []patch {
	gw, groups := chainGroups(es, order)
	block := func(idx []int, keep func(unit string) bool) []patch {
		var out []patch
		for j := len(idx) - 1; j >= 0; j-- {
			spec := applied("TrafficPolicy", es[idx[j]])
			if keep != nil {
				spec = filtered(spec, keep)
			}
			if len(spec) > 0 {
				out = append(out, patch{idx[j], spec})
			}
		}
		return out
	}
	var seq []patch
	for gi, g := range groups {
		switch {
		case gi == 0:
			seq = block(g.idx, nil)
		case g.mode == shallowPreferParent:
			seq = append(seq, block(g.idx, nil)...)
		case g.mode == deepPreferParent:
			low := block(g.idx, func(u string) bool { return !parentOverrides(g.mode, u) })
			high := block(g.idx, func(u string) bool { return parentOverrides(g.mode, u) })
			seq = append(append(low, seq...), high...)
		default:
			seq = append(block(g.idx, nil), seq...)
		}
	}
	return append(block(gw, nil), seq...)
}

// filtered is spec with the top-level fields keep accepts.
func filtered(spec map[string]interface{}, keep func(string) bool) map[string]interface{} {
	out := make(map[string]interface{}, len(spec))
	for k, v := range spec {
		if keep(k) {
			out[k] = v
		}
	}
	return out
}

// priorityOrder returns the indices of the entries kgateway applies, the one preferred first:
// the more specific level first; at one level the heavier policy-weight (TrafficPolicy), then
// the established order (older first). For BackendConfigPolicy, applied in that order and each
// overwriting, the order is reversed. An entry whose weight is not an integer is dropped, as
// kgateway drops a policy with errors from the merge.
func priorityOrder(es []semantics.FoldEntry) []int {
	var idx []int
	weights := make([]int64, len(es))
	for i := range es {
		w, ok := weight(es[i].Policy)
		if !ok {
			continue
		}
		weights[i] = w
		idx = append(idx, i)
	}
	byWeight := len(es) > 0 && es[0].Policy.ID.GK.Kind == "TrafficPolicy"
	sort.SliceStable(idx, func(a, b int) bool {
		ea, eb := es[idx[a]], es[idx[b]]
		if ea.Level != eb.Level {
			return ea.Level > eb.Level
		}
		return byWeight && weights[idx[a]] > weights[idx[b]]
	})
	if len(es) > 0 && es[0].Policy.ID.GK.Kind == "BackendConfigPolicy" {
		for l, r := 0, len(idx)-1; l < r; l, r = l+1, r-1 {
			idx[l], idx[r] = idx[r], idx[l]
		}
	}
	return idx
}

// weight reads a policy's kgateway.dev/policy-weight (0 when absent; not ok when it is not a
// 32-bit integer: pluginsdk/utils/policy.go ParsePrecedenceWeightAnnotation).
func weight(p *semantics.Policy) (int64, bool) {
	if p.ID.GK.Kind != "TrafficPolicy" {
		return 0, true
	}
	v, ok := semantics.Lookup(p.Raw, "metadata.annotations")
	if !ok {
		return 0, true
	}
	ann, _ := v.(map[string]interface{})
	s, ok := ann[weightAnnotation].(string)
	if !ok {
		return 0, true
	}
	w, err := strconv.ParseInt(s, 10, 32)
	return w, err == nil
}

// applied is the part of e's spec kgateway applies where e is attached: all of it but a
// Gateway-side TrafficPolicy's route-only fields.
func applied(kind string, e semantics.FoldEntry) map[string]interface{} {
	spec := e.Entry.Spec
	if kind != "TrafficPolicy" || !gatewaySide(e.Node) {
		return spec
	}
	var out map[string]interface{}
	for _, f := range routeOnly {
		if _, set := spec[f]; !set {
			continue
		}
		if out == nil {
			out = make(map[string]interface{}, len(spec))
			for k, v := range spec {
				out[k] = v
			}
		}
		delete(out, f)
	}
	if out == nil {
		return spec
	}
	return out
}

// gatewaySide reports whether n is a Gateway, a listener or a ListenerSet.
func gatewaySide(n topology.NodeID) bool {
	return n.Group == topology.GatewayGroup && n.Kind == "Gateway" || topology.IsListenerSetGK(n.GK())
}
