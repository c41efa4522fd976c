package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/tree"
)

func draw(t *testing.T, n *tree.Node) string {
	t.Helper()
	var b bytes.Buffer
	if err := (tree.Printer{}).Fprint(&b, n); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func ref(kind, ns, name string) v1alpha1.ObjectReference {
	return v1alpha1.ObjectReference{Group: "gateway.networking.k8s.io", Kind: kind, Namespace: ns, Name: name}
}

// TestTraceHidden: what a caller who may not read everything is told, and
// the parts of the answer the demo does not show.
func TestTraceHidden(t *testing.T) {
	port := int32(8080)
	rt := &v1alpha1.RequestTrace{
		Spec: v1alpha1.RequestTraceSpec{Port: 443, Request: v1alpha1.TracedRequest{
			Host: "shop.example", GRPC: true, Protocol: "HTTPS", Path: "/pkg.Svc/Get",
			Headers: map[string]string{"x-b": "2", "x-a": "1"}, QueryParams: map[string]string{"q": "v"},
		}},
		Status: v1alpha1.RequestTraceStatus{
			HiddenMatches: 2,
			Matches: []v1alpha1.TraceMatch{
				{Gateway: ref("Gateway", "infra", "gw"), Listener: "https", Port: 443, Protocol: "HTTPS", Reason: "RouteHidden",
					ListenerSet: &v1alpha1.ObjectReference{Kind: "ListenerSet", Namespace: "infra", Name: "extra"},
					Message:     "a route in a namespace where you may not get effectivepolicies serves the request"},
				{Gateway: ref("Gateway", "infra", "gw"), Listener: "grpc", Port: 443, Reason: "Matched",
					Route: &v1alpha1.ObjectReference{Kind: "GRPCRoute", Namespace: "shop", Name: "api"},
					Rule:  &v1alpha1.TraceRule{Index: 1, Name: "get", MatchIndex: 0}, HiddenBackends: 1,
					Backends: []v1alpha1.TraceBackend{{Ref: v1alpha1.ObjectReference{Kind: "Service", Namespace: "other", Name: "api"}, Port: &port, Weight: 1,
						Message: "no ReferenceGrant in namespace other allows GRPCRoute from namespace shop to reference it"}}},
			},
		},
	}
	want := `POST shop.example/pkg.Svc/Get port 443 HTTPS gRPC header x-a=1 header x-b=2 query q=v
├── Gateway infra/gw
│   ├── listener https of ListenerSet infra/extra (port 443, HTTPS)  RouteHidden
│   │   └── a route in a namespace where you may not get effectivepolicies serves the request
│   └── listener grpc (port 443)  Matched
│       └── GRPCRoute shop/api
│           └── rule 1 get (match 0)
│               ├── backend Service other/api port 8080 (weight 1)
│               │   └── no ReferenceGrant in namespace other allows GRPCRoute from namespace shop to reference it
│               └── 1 more backend in namespaces where you may not get effectivepolicies
└── the request is also taken by 2 Gateways in namespaces where you may not get effectivepolicies
`
	if got := draw(t, Trace(rt)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestReachUnresolved(t *testing.T) {
	rp := v1alpha1.ReachPolicy{
		Group: "example.com", Kind: "RetryPolicy", Class: v1alpha1.ClassInherited,
		AttachedTo: []v1alpha1.AttachedTarget{
			{Target: ref("Gateway", "infra", "gw"), Resolved: true},
			{Target: ref("Gateway", "infra", "later"), Reason: v1alpha1.ReasonTargetNotFound, Message: "Gateway infra/later does not exist"},
		},
		Summary:       v1alpha1.ReachSummary{Targets: 1, Enforced: 1},
		HiddenTargets: 3,
		Reaches: []v1alpha1.Reach{{Target: ref("Gateway", "infra", "gw"), AttachedTo: ref("Gateway", "infra", "gw"),
			Stanza: v1alpha1.StanzaDefaults, Outcome: v1alpha1.OutcomeEnforced}},
	}
	want := `RetryPolicy.example.com infra/retry  Inherited
├── attached to
│   ├── Gateway infra/gw  resolved
│   └── Gateway infra/later  not resolved  TargetNotFound
│       └── Gateway infra/later does not exist
├── summary: 1 target: 1 Enforced, 0 PartiallyEnforced, 0 Overridden, 0 Conflicted, 0 Invalid
├── hidden targets: 3 (in namespaces where you may not get effectivepolicies)
└── reaches
    └── Gateway infra/gw  Enforced  Defaults, from Gateway infra/gw
`
	if got := draw(t, Reach("infra", "retry", rp)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestAssumedMarker: a kind whose semantics were assumed says so on its line wherever the
// plugin draws it (docs/spec.md §4.1); a kind a descriptor describes does not.
func TestAssumedMarker(t *testing.T) {
	const marker = "  semantics assumed (GEP fold; no descriptor describes this kind)"
	gw := ref("Gateway", "infra", "gw")
	tp := func(group, kind, semantics string) v1alpha1.TargetPolicy {
		return v1alpha1.TargetPolicy{Group: group, Kind: kind, Class: v1alpha1.ClassInherited, Semantics: semantics}
	}
	assumed := tp("example.com", "RetryPolicy", v1alpha1.SemanticsAssumed)
	described := tp("gateway.envoyproxy.io", "BackendTrafficPolicy", "EnvoyGateway")
	target := v1alpha1.Target{Group: gw.Group, Kind: gw.Kind, Name: gw.Name, Policies: []v1alpha1.TargetPolicy{described, assumed}}
	for _, tc := range []struct {
		name string
		node *tree.Node
		want []string // the lines that name a kind
	}{
		{"describe", Target("infra", target), []string{
			"├── BackendTrafficPolicy.gateway.envoyproxy.io  Inherited",
			"└── RetryPolicy.example.com  Inherited" + marker,
		}},
		{"reach", Reach("infra", "retry", v1alpha1.ReachPolicy{Group: "example.com", Kind: "RetryPolicy", Class: v1alpha1.ClassInherited, Semantics: v1alpha1.SemanticsAssumed}), []string{
			"RetryPolicy.example.com infra/retry  Inherited" + marker,
		}},
		{"review", Review(v1alpha1.EffectivePolicyReviewStatus{Changes: []v1alpha1.EffectivePolicyChange{{
			Resource: "effectivepolicies", Namespace: "infra", Name: "gw", Change: v1alpha1.ChangeAdded,
			After: v1alpha1.ReviewTargets{Targets: []v1alpha1.Target{target}},
		}}})[0], []string{
			"    ├── + BackendTrafficPolicy.gateway.envoyproxy.io  Inherited",
			"    └── + RetryPolicy.example.com  Inherited" + marker,
		}},
		{"trace", Trace(&v1alpha1.RequestTrace{Status: v1alpha1.RequestTraceStatus{Matches: []v1alpha1.TraceMatch{{
			Gateway: gw, Listener: "http", Reason: "Matched", Route: &v1alpha1.ObjectReference{Kind: "HTTPRoute", Namespace: "app", Name: "rt"},
			Rule:     &v1alpha1.TraceRule{MatchIndex: -1},
			Policies: []v1alpha1.TracePolicy{{Group: "example.com", Kind: "RetryPolicy", Class: v1alpha1.ClassInherited, Semantics: v1alpha1.SemanticsAssumed}},
		}}}}), []string{
			"                └── RetryPolicy.example.com  Inherited" + marker,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, l := range strings.Split(draw(t, tc.node), "\n") {
				if strings.Contains(l, "Policy.") {
					got = append(got, l)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
