package kuadrantoracle

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The oracle checked against kuadrant-operator v1.5.2's own tests: each case rebuilds the objects
// of one upstream test as YAML and asserts what that test asserts. Upstream files (module
// github.com/kuadrant/kuadrant-operator@v1.5.2):
//   - internal/controller/effective_auth_policies_reconciler_test.go TestCalculateEffectiveAuthPolicies
//   - tests/common/ratelimitpolicy/ratelimitpolicy_controller_test.go, contexts "RLP Defaults" and
//     "RLP Overrides" (policyFactory: toystore-rlp, defaults l1 1/3m; tests.BuildBasicGateway,
//     tests.BuildBasicHttpRoute in tests/commons.go)

const basicTopology = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: kuadrant-gateway-class}
spec: {controllerName: istio.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: test-placed-gateway, namespace: test}
spec:
  gatewayClassName: kuadrant-gateway-class
  listeners:
  - {name: default, port: 80, protocol: HTTP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: toystore-route, namespace: test}
spec:
  parentRefs: [{name: test-placed-gateway, namespace: test}]
  hostnames: ['*.example.com']
  rules:
  - matches: [{path: {type: PathPrefix, value: /toy}, method: GET}]
`

const freeRoute = `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: route2, namespace: test}
spec:
  parentRefs: [{name: test-placed-gateway, namespace: test}]
  hostnames: ['*.car.com']
  rules:
  - matches: [{path: {type: PathPrefix, value: /toy}, method: GET}]
`

// gwRLP is policyFactory's policy retargeted at the Gateway; stanza is "defaults" or "overrides".
func gwRLP(stanza, created string) string {
	return `
---
apiVersion: kuadrant.io/v1
kind: RateLimitPolicy
metadata: {name: toystore-rlp, namespace: test, creationTimestamp: "` + created + `"}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: test-placed-gateway}
  ` + stanza + `:
    limits:
      l1:
        rates: [{limit: 1, window: 3m}]
`
}

func routeRLP(limit, created string) string {
	return `
---
apiVersion: kuadrant.io/v1
kind: RateLimitPolicy
metadata: {name: httproute-rlp, namespace: test, creationTimestamp: "` + created + `"}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: toystore-route}
  limits:
    ` + limit + `:
      rates: [{limit: 10, window: 5s}]
`
}

// The AuthPolicies of TestCalculateEffectiveAuthPolicies. Upstream all three are named gw-auth
// (with different UIDs); here they get names of their own so that their sources can be told apart.
const authTopologyAndPolicies = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: kuadrant-gateway-class}
spec: {controllerName: kuadrant.io/policy-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: kuadrant-gateway, namespace: default}
spec:
  gatewayClassName: kuadrant-gateway-class
  listeners:
  - {name: http, hostname: localhost, port: 80, protocol: HTTP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: http-route, namespace: default}
spec:
  parentRefs: [{name: kuadrant-gateway}]
  rules:
  - name: get-rule
    matches: [{method: GET}]
    backendRefs: [{name: backend-ro}]
  - name: post-rule
    matches: [{method: POST}]
    backendRefs: [{name: backend-rw}]
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: gw-auth, namespace: default}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: kuadrant-gateway}
  overrides:
    strategy: merge
    rules:
      authentication:
        jwt: {jwt: {issuerUrl: 'http://my-auth-server/auth'}}
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: route-auth, namespace: default}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: http-route}
  rules:
    authorization:
      admins-only:
        patternMatching:
          patterns: [{predicate: "'admin' in auth.identity.groups"}]
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: rule-auth, namespace: default}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: http-route, sectionName: get-rule}
  rules:
    authorization:
      admins-or-privileged:
        patternMatching:
          patterns: [{predicate: "'admin' in auth.identity.groups || 'privileged' in auth.identity.groups"}]
`

// wantPath is the effective policy expected on the path ending at a route rule: rule ID -> policy.
type wantPath struct {
	kind, rule string
	entries    map[string]string
}

// wantEnforced is a policy's expected Enforced condition: its reason and the start of its message.
type wantEnforced struct {
	policy, reason, message string
}

var oracleBinary = sync.OnceValues(func() (string, error) { return Binary(context.Background()) })

// upstreamCase is one upstream test: its objects and what it asserts.
type upstreamCase struct {
	name     string
	input    string
	paths    []wantPath
	enforced []wantEnforced
}

func upstreamCases() []upstreamCase {
	const t0, t1 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z"
	return []upstreamCase{{
		name:  "TestCalculateEffectiveAuthPolicies",
		input: authTopologyAndPolicies,
		paths: []wantPath{
			{"AuthPolicy", "http-route#get-rule", map[string]string{"authentication#jwt": "default/gw-auth", "authorization#admins-or-privileged": "default/rule-auth"}},
			{"AuthPolicy", "http-route#post-rule", map[string]string{"authentication#jwt": "default/gw-auth", "authorization#admins-only": "default/route-auth"}},
		},
	}, {
		name:  "RLP Defaults: route policy defaults taking precedence over Gateway policy defaults",
		input: basicTopology + gwRLP("defaults", t0) + routeRLP("l1", t1),
		paths: []wantPath{{"RateLimitPolicy", "toystore-route#rule-1", map[string]string{"l1": "test/httproute-rlp"}}},
		// RLPIsEnforced(gwRLPKey) is false.
		enforced: []wantEnforced{{"test/toystore-rlp", "Overridden", "RateLimitPolicy is overridden by [test/httproute-rlp]"}},
	}, {
		name:  "RLP Defaults: free route is created, Gateway policy should now be enforced",
		input: basicTopology + freeRoute + gwRLP("defaults", t0) + routeRLP("l1", t1),
		paths: []wantPath{
			{"RateLimitPolicy", "toystore-route#rule-1", map[string]string{"l1": "test/httproute-rlp"}},
			{"RateLimitPolicy", "route2#rule-1", map[string]string{"l1": "test/toystore-rlp"}},
		},
		// Enforced, but for the Limitador this oracle does not have.
		enforced: []wantEnforced{{"test/toystore-rlp", "MissingResource", "limitador"}},
	}, {
		name:     "RLP Defaults: explicit defaults - no underlying routes to enforce policy",
		input:    strings.Replace(basicTopology, "kind: HTTPRoute\n", "kind: HTTPRouteGone\n", 1) + gwRLP("defaults", t0),
		enforced: []wantEnforced{{"test/toystore-rlp", "Unknown", "RateLimitPolicy is not in the path to any existing routes"}},
	}, {
		name:     "RLP Overrides: gateway overrides exist and then route policy created",
		input:    basicTopology + gwRLP("overrides", t0) + routeRLP("route", t1),
		paths:    []wantPath{{"RateLimitPolicy", "toystore-route#rule-1", map[string]string{"l1": "test/toystore-rlp"}}},
		enforced: []wantEnforced{{"test/httproute-rlp", "Overridden", "RateLimitPolicy is overridden by [test/toystore-rlp]"}},
	}, {
		name:     "RLP Overrides: route policy exists and then gateway policy created",
		input:    basicTopology + routeRLP("route", t0) + gwRLP("overrides", t1),
		paths:    []wantPath{{"RateLimitPolicy", "toystore-route#rule-1", map[string]string{"l1": "test/toystore-rlp"}}},
		enforced: []wantEnforced{{"test/httproute-rlp", "Overridden", "RateLimitPolicy is overridden by [test/toystore-rlp]"}},
	}}
}

func TestOracleAgreesWithKuadrantTests(t *testing.T) {
	cases := upstreamCases()
	bin, err := oracleBinary()
	if err != nil {
		t.Fatal(err)
	}
	inputs := make([][]byte, len(cases))
	for i, c := range cases {
		inputs[i] = []byte(c.input)
	}
	results, err := Run(context.Background(), bin, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := results[i]
			got := map[string]map[string]string{}
			for _, p := range res.Paths {
				last := p.Path[len(p.Path)-1]
				got[p.Kind+" "+last.Name+"#"+last.SectionName] = entriesOf(p)
			}
			if len(got) != len(c.paths) {
				t.Errorf("%d effective policies, want %d: %v", len(got), len(c.paths), keys(got))
			}
			for _, w := range c.paths {
				g, ok := got[w.kind+" "+w.rule]
				if !ok {
					t.Errorf("no %s on %s; have %v", w.kind, w.rule, keys(got))
					continue
				}
				if !sameEntries(g, w.entries) {
					t.Errorf("%s on %s: %v, want %v", w.kind, w.rule, g, w.entries)
				}
			}
			for _, w := range c.enforced {
				checkEnforced(t, res, w)
			}
		})
	}
}

func checkEnforced(t *testing.T, res *Result, w wantEnforced) {
	t.Helper()
	for _, p := range res.Policies {
		if p.Namespace+"/"+p.Name != w.policy {
			continue
		}
		if a := p.Condition("Accepted"); a == nil || a.Status != "True" {
			t.Errorf("%s: Accepted %+v, want True", w.policy, a)
		}
		e := p.Condition("Enforced")
		if e == nil || e.Status != "False" || e.Reason != w.reason || !strings.Contains(e.Message, w.message) {
			t.Errorf("%s: Enforced %+v, want False %s %q", w.policy, e, w.reason, w.message)
		}
		return
	}
	t.Errorf("no status for %s", w.policy)
}

func entriesOf(p Path) map[string]string {
	out := map[string]string{}
	for id, r := range p.Rules {
		out[id] = SourceName(r.Source)
	}
	return out
}

func sameEntries(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
