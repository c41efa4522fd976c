package compute

import (
	"strings"
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/jsontest"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

func TestListenerSections(t *testing.T) {
	topo := baseTopology + `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: secure, namespace: appns}
spec:
  parentRefs: [{name: gw, sectionName: https}]
  rules: [{backendRefs: [{name: svc3}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: byport, namespace: appns}
spec:
  parentRefs: [{name: gw, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: svc3, namespace: appns}
`
	pols := `
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: https-only, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: https}]
  attempts: 9
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: no-such-section, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: nope}]
  attempts: 1
`
	got := world(t, topo, pols)
	gwTP := effAt(t, got, Key{"appns", "gw"}, "Gateway", retryK)
	if len(gwTP.Effective) != 1 || gwTP.Effective[0].SectionName != "https" || viaString(gwTP.Effective[0].Via) != "[Gateway/gw#https]" {
		t.Fatalf("gateway effective %+v", gwTP.Effective)
	}
	if len(gwTP.Sources) != 1 || gwTP.Sources[0].AttachedTo.SectionName != "https" {
		t.Errorf("gateway sources %+v", gwTP.Sources)
	}
	// rt attaches to both listeners: contexts [gw#https] and [] -> one entry.
	rtTP := effAt(t, got, Key{"appns", "rt"}, "HTTPRoute", retryK)
	if e := onlyEffective(t, rtTP, ""); viaString(e.Via) != "[Gateway/gw#https]" {
		t.Errorf("rt via %s", viaString(e.Via))
	}
	// secure attaches to https only; svc3 below it.
	if e := onlyEffective(t, effAt(t, got, Key{"appns", "svc3"}, "Service", retryK), ""); string(e.Spec.Raw) != `{"attempts":9}` {
		t.Errorf("svc3 spec %s", e.Spec.Raw)
	}
	// byport attaches to the port-80 listener only: nothing reaches it.
	if o, ok := got[Key{"appns", "byport"}]; ok {
		t.Errorf("byport should have no output:\n%s", dump(o))
	}
}

func TestDirectWholeAndSections(t *testing.T) {
	pols := `
apiVersion: example.com/v1
kind: TimeoutPolicy
metadata: {name: t-old, namespace: appns}
spec:
  targetRefs: [{group: "", kind: Service, name: svc}]
  timeout: 5s
---
apiVersion: example.com/v1
kind: TimeoutPolicy
metadata: {name: t-new, namespace: appns}
spec:
  targetRefs: [{group: "", kind: Service, name: svc}]
  timeout: 7s
---
apiVersion: example.com/v1
kind: TimeoutPolicy
metadata: {name: t-port, namespace: appns}
spec:
  targetRefs: [{group: "", kind: Service, name: svc, sectionName: http}]
  timeout: 1s
  strategy: atomic
---
apiVersion: example.com/v1
kind: TimeoutPolicy
metadata: {name: t-gw, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  timeout: 9s
`
	got := world(t, baseTopology, pols)
	obj := got[Key{"appns", "svc"}]
	tp := findTP(obj, "Service", "example.com", "TimeoutPolicy")
	if tp == nil || tp.Class != v1alpha1.ClassDirect {
		t.Fatalf("no direct policy on svc:\n%s", dump(obj))
	}
	whole := onlyEffective(t, tp, "")
	if string(whole.Spec.Raw) != `{"timeout":"5s"}` || whole.FieldSources["/timeout"] != "appns/t-old" || viaString(whole.Via) != "[Service/svc]" {
		t.Errorf("whole %s %v %s", whole.Spec.Raw, whole.FieldSources, viaString(whole.Via))
	}
	sec := onlyEffective(t, tp, "http")
	if string(sec.Spec.Raw) != `{"timeout":"1s"}` || viaString(sec.Via) != "[Service/svc Service/svc#http]" {
		t.Errorf("section %s %s (strategy must be stripped)", sec.Spec.Raw, viaString(sec.Via))
	}
	for name, want := range map[string]v1alpha1.Outcome{
		"appns/t-old":  v1alpha1.OutcomePartiallyEnforced, // wins the object, loses the section
		"appns/t-new":  v1alpha1.OutcomeConflicted,
		"appns/t-port": v1alpha1.OutcomeEnforced,
	} {
		if o, msg := sourceOutcome(tp, name, ""); o != want {
			t.Errorf("%s: %s (%s), want %s", name, o, msg, want)
		}
	}
	if _, msg := sourceOutcome(tp, "appns/t-new", ""); !strings.Contains(msg, "appns/t-old") {
		t.Errorf("conflict message %q should name appns/t-old", msg)
	}
	for _, s := range tp.Sources {
		if s.MergeStrategy != v1alpha1.MergeNone || s.Stanza != v1alpha1.StanzaNone {
			t.Errorf("direct source %+v", s)
		}
	}
	// Direct policies do not flow down: the gateway policy is not on rt.
	if tp := findTP(got[Key{"appns", "rt"}], "HTTPRoute", "example.com", "TimeoutPolicy"); tp != nil {
		t.Errorf("direct policy leaked to route: %+v", tp)
	}
	if _, ok := got[Key{"appns", "svc2"}]; ok {
		t.Errorf("svc2 should be absent")
	}
}

// virtualAndCrossNamespaceTopology adds to baseTopology two routes in namespace other, one of them
// granted to RetryPolicies in appns.
const virtualAndCrossNamespaceTopology = baseTopology + `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ort, namespace: other}
spec:
  parentRefs: [{name: gw, namespace: appns}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: granted, namespace: other}
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: allow, namespace: other}
spec:
  from: [{group: example.com, kind: RetryPolicy, namespace: appns}]
  to: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: granted}]
`

// virtualAndCrossNamespacePolicies target a virtual ExternalHost, both routes in namespace other,
// that namespace itself and a route that does not exist.
const virtualAndCrossNamespacePolicies = `
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: virt, namespace: appns}
spec:
  targetRefs: [{group: mesh.example.io, kind: ExternalHost, name: api-example-com}]
  attempts: 2
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: cross-denied, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: ort, namespace: other}]
  attempts: 3
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: cross-ok, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: granted, namespace: other}]
  attempts: 4
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: other-ns, namespace: appns}
spec:
  targetRefs: [{group: "", kind: Namespace, name: other}]
  attempts: 6
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: missing, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: does-not-exist}]
  attempts: 5
`

func TestVirtualAndCrossNamespaceTargets(t *testing.T) {
	got := world(t, virtualAndCrossNamespaceTopology, virtualAndCrossNamespacePolicies)
	vtp := effAt(t, got, Key{"appns", "api-example-com"}, "ExternalHost", retryK)
	if e := onlyEffective(t, vtp, ""); string(e.Spec.Raw) != `{"attempts":2}` || viaString(e.Via) != "[ExternalHost/api-example-com]" {
		t.Errorf("virtual %s %s", e.Spec.Raw, viaString(e.Via))
	}
	// The route in "other" without a grant: the policy is listed Invalid.
	otp := effAt(t, got, Key{"other", "ort"}, "HTTPRoute", retryK)
	if o, msg := sourceOutcome(otp, "appns/cross-denied", "*"); o != v1alpha1.OutcomeInvalid || !strings.Contains(msg, "ReferenceGrant") {
		t.Errorf("cross-denied: %s %q", o, msg)
	}
	if len(otp.Effective) != 0 {
		t.Errorf("an invalid source must not be merged: %+v", otp.Effective)
	}
	gtp := effAt(t, got, Key{"other", "granted"}, "HTTPRoute", retryK)
	if e := onlyEffective(t, gtp, ""); string(e.Spec.Raw) != `{"attempts":4}` {
		t.Errorf("granted %s", e.Spec.Raw)
	}
	// Targeting another Namespace is cross-namespace too.
	ntp := effAt(t, got, Key{"", "other"}, "Namespace", retryK)
	if o, msg := sourceOutcome(ntp, "appns/other-ns", "*"); o != v1alpha1.OutcomeInvalid || !strings.Contains(msg, "ReferenceGrant") {
		t.Errorf("other-ns: %s %q", o, msg)
	}
	if findTP(got[Key{"other", "ort"}], "HTTPRoute", retryG, retryK).Effective != nil {
		t.Errorf("other-ns reached a route in namespace other")
	}
	if _, ok := got[Key{"appns", "does-not-exist"}]; ok {
		t.Error("a missing object of a served kind must reach nothing")
	}
}

// nameCollisionTopology adds to baseTopology a Gateway, a route and a Service all named shared, and a
// GatewayClass named like the Namespace appns.
const nameCollisionTopology = baseTopology + `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: shared, namespace: appns}
spec: {gatewayClassName: gc, listeners: [{name: http, port: 80, protocol: HTTP}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shared, namespace: appns}
spec:
  parentRefs: [{name: shared}]
  rules: [{backendRefs: [{name: shared}]}]
---
apiVersion: v1
kind: Service
metadata: {name: shared, namespace: appns}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: appns}
spec: {controllerName: example.com/c}
`

// nameCollisionPolicies target the Gateway shared, both GatewayClasses (cluster-scoped) and the
// Namespace appns.
const nameCollisionPolicies = `
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: on-shared-gw, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: shared}]
  attempts: 1
---
apiVersion: example.com/v1
kind: ClusterRetryPolicy
metadata: {name: class-wide}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: GatewayClass, name: gc}
  overrides: {budget: 10}
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: on-ns, namespace: appns}
spec:
  targetRefs: [{group: "", kind: Namespace, name: appns}]
  attempts: 0
---
apiVersion: example.com/v1
kind: ClusterRetryPolicy
metadata: {name: class-appns}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: GatewayClass, name: appns}
  x: 1
`

func TestNameCollisionAndClusterTargets(t *testing.T) {
	got := world(t, nameCollisionTopology, nameCollisionPolicies)
	obj := got[Key{"appns", "shared"}]
	ts := targetsOf(obj)
	var kinds []string
	for _, tg := range ts {
		kinds = append(kinds, tg.Group+"/"+tg.Kind)
	}
	if strings.Join(kinds, ",") != "/Service,gateway.networking.k8s.io/Gateway,gateway.networking.k8s.io/HTTPRoute" {
		t.Fatalf("targets %v\n%s", kinds, dump(obj))
	}
	// Cluster-scoped policy on the GatewayClass.
	cobj, ok := got[Key{"", "gc"}]
	if !ok {
		t.Fatal("no ClusterEffectivePolicy gc")
	}
	if c, isC := cobj.(*v1alpha1.ClusterEffectivePolicy); !isC || c.Kind != "ClusterEffectivePolicy" || c.Namespace != "" {
		t.Fatalf("gc output %T %+v", cobj, cobj)
	}
	ctp := findTP(cobj, "GatewayClass", "example.com", "ClusterRetryPolicy")
	if ctp == nil || len(ctp.Sources) != 1 || ctp.Sources[0].Namespace != "" || ctp.Sources[0].Name != "class-wide" {
		t.Fatalf("gc sources %s", dump(cobj))
	}
	if e := onlyEffective(t, ctp, ""); e.FieldSources["/budget"] != "class-wide" {
		t.Errorf("cluster policy named %v", e.FieldSources)
	}
	// The Namespace appns and the GatewayClass appns share one
	// ClusterEffectivePolicy.
	nobj := got[Key{"", "appns"}]
	if len(targetsOf(nobj)) != 2 {
		t.Errorf("appns cluster targets:\n%s", dump(nobj))
	}
	// The shared Service: Namespace default, class override, gateway default.
	stp := findTP(obj, "Service", "example.com", "ClusterRetryPolicy")
	if stp == nil {
		t.Fatalf("class override missing on shared service\n%s", dump(obj))
	}
	rtp := findTP(obj, "Service", "example.com", "RetryPolicy")
	e := onlyEffective(t, rtp, "")
	if viaString(e.Via) != "[Namespace/appns Gateway/shared]" || string(e.Spec.Raw) != `{"attempts":1}` {
		t.Errorf("shared svc %s %s", viaString(e.Via), e.Spec.Raw)
	}
}

func TestSelectorTargets(t *testing.T) {
	topo := baseTopology + `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: labeled, namespace: appns, labels: {tier: gold}}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: backendtrafficpolicies.gateway.envoyproxy.io}
spec:
  group: gateway.envoyproxy.io
  scope: Namespaced
  names: {kind: BackendTrafficPolicy, plural: backendtrafficpolicies}
  versions: [{name: v1alpha1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
`
	pols := `
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: by-label, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, selector: {matchLabels: {tier: gold}}}]
  attempts: 7
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: eg, namespace: appns}
spec:
  targetSelectors: [{group: gateway.networking.k8s.io, kind: HTTPRoute, matchLabels: {tier: gold}}]
  mergeType: StrategicMerge
  timeout: {http: {requestTimeout: 5s}}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: eg-gw, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  retry: {numRetries: 3}
`
	got := world(t, topo, pols)
	tp := effAt(t, got, Key{"appns", "labeled"}, "HTTPRoute", retryK)
	if e := onlyEffective(t, tp, ""); string(e.Spec.Raw) != `{"attempts":7}` {
		t.Errorf("selector target %s", e.Spec.Raw)
	}
	if _, ok := got[Key{"appns", "rt"}]; ok {
		if findTP(got[Key{"appns", "rt"}], "HTTPRoute", retryG, retryK) != nil {
			t.Error("unlabeled route selected")
		}
	}
	eg := findTP(got[Key{"appns", "labeled"}], "HTTPRoute", "gateway.envoyproxy.io", "BackendTrafficPolicy")
	if eg == nil || len(eg.Effective) != 1 || string(eg.Effective[0].Spec.Raw) != `{"timeout":{"http":{"requestTimeout":"5s"}}}` {
		t.Fatalf("envoy gateway selector policy:\n%s", dump(got[Key{"appns", "labeled"}]))
	}
	if eg.Sources[0].MergeStrategy != v1alpha1.MergeCustom {
		t.Errorf("mergeType StrategicMerge -> %s", eg.Sources[0].MergeStrategy)
	}
	// On rt: gateway-level BTP (AtomicDefaults by default) flows down.
	rt := findTP(got[Key{"appns", "rt"}], "HTTPRoute", "gateway.envoyproxy.io", "BackendTrafficPolicy")
	if rt == nil || string(rt.Effective[0].Spec.Raw) != `{"retry":{"numRetries":3}}` || rt.Sources[0].MergeStrategy != v1alpha1.MergeAtomicDefaults {
		t.Errorf("eg gateway policy on rt: %+v", rt)
	}
}

func TestParentlessObjects(t *testing.T) {
	topo := baseTopology + `---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: orphan, namespace: appns}
spec:
  parentRefs: [{name: no-such-gateway}]
  rules: [{backendRefs: [{group: example.io, kind: Bucket, name: b}]}]
`
	pols := `
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: nsdef, namespace: appns}
spec:
  targetRefs: [{group: "", kind: Namespace, name: appns}]
  a: 1
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: bucket, namespace: appns}
spec:
  targetRefs: [{group: example.io, kind: Bucket, name: b}]
  b: 2
`
	got := world(t, topo, pols)
	check := func(key Key, kind, via, spec string) {
		t.Helper()
		tp := effAt(t, got, key, kind, retryK)
		e := onlyEffective(t, tp, "")
		if viaString(e.Via) != via || jsontest.Canonical(t, e.Spec.Raw) != spec {
			t.Errorf("%v %s: via %s spec %s, want %s %s", key, kind, viaString(e.Via), e.Spec.Raw, via, spec)
		}
	}
	check(Key{"appns", "orphan"}, "TCPRoute", "[Namespace/appns]", `{"a":1}`)
	// A non-Service backend hangs under the route; it is a real node, not
	// a virtual one, because a route references it.
	check(Key{"appns", "b"}, "Bucket", "[Namespace/appns Bucket/b]", `{"b":2}`)
	check(Key{"appns", "gw"}, "Gateway", "[Namespace/appns]", `{"a":1}`)
}

// TestOneSourcePerPolicyStanza: a policy attached at two levels of one path
// is one source (docs/spec.md §2), attached to the least specific point.
func TestOneSourcePerPolicyStanza(t *testing.T) {
	pols := `
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: twice, namespace: appns}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: rt}
  - {group: gateway.networking.k8s.io, kind: Gateway, name: gw}
  attempts: 1
`
	got := world(t, baseTopology, pols)
	tp := effAt(t, got, Key{"appns", "rt"}, "HTTPRoute", retryK)
	if len(tp.Sources) != 1 || tp.Sources[0].AttachedTo.Kind != "Gateway" || tp.Sources[0].Outcome != v1alpha1.OutcomeEnforced {
		t.Fatalf("sources %+v", tp.Sources)
	}
	if e := onlyEffective(t, tp, ""); viaString(e.Via) != "[Gateway/gw HTTPRoute/rt]" {
		t.Errorf("via %s", viaString(e.Via))
	}
}
