package kgatewayoracle

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// goldenRoute is what a golden output of kgateway's translator test
// (pkg/kgateway/translator/gateway/testutils/outputs) says of one route or
// virtual host: its TrafficPolicy merge origins, timeout and retry count.
type goldenRoute struct {
	gateway, routeConfig, vhost, route string // route "" for the virtual host itself
	origins                            map[string][]string
	timeout                            string
	retries                            uint32 // 0: no retry policy
}

const tpOrigins = "TrafficPolicy.gateway.kgateway.dev"

func tp(ns, name string) string { return "gateway.kgateway.dev/TrafficPolicy/" + ns + "/" + name }

// TestGoldenOrigins runs the oracle on inputs of kgateway's own translator
// golden tests (gateway_translator_test.go TestBasic) and checks what it
// reads against their golden outputs.
func TestGoldenOrigins(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kgateway's test binary")
	}
	cases := []struct {
		input string
		want  []goldenRoute
	}{
		{
			// outputs/traffic-policy/merge.yaml: the rule's route carries cors from the ExtensionRef
			// policy, rateLimit.local from the route policy, transformation from the rule policy.
			input: "traffic-policy/merge.yaml",
			want: []goldenRoute{{
				gateway: "infra/example-gateway", routeConfig: "listener~80", vhost: "listener~80~example_com",
				route: "listener~80~example_com-route-0-httproute-example-route-infra-0-0-rule0-matcher-0",
				origins: map[string][]string{
					"cors":            {tp("infra", "extensionref-policy")},
					"rateLimit.local": {tp("infra", "policy-without-section-name")},
					"transformation":  {tp("infra", "policy-with-section-name")},
				},
			}},
		},
		{
			// outputs/traffic-policy/timeout-retry.yaml: the listener's retry on every virtual host,
			// the route policies' retry and timeouts on their routes.
			input: "traffic-policy/timeout-retry.yaml",
			want: []goldenRoute{
				{gateway: "default/example-gateway", routeConfig: "listener~80", vhost: "listener~80~example_com",
					origins: map[string][]string{"retry": {tp("default", "example-gateway-retry-and-timeout")}}, retries: 3},
				{gateway: "default/example-gateway", routeConfig: "listener~80", vhost: "listener~80~example_com",
					route:   "listener~80~example_com-route-0-httproute-example-route-timeout-default-0-0-matcher-0",
					origins: map[string][]string{"timeouts": {tp("default", "example-route-timeout")}}, timeout: "9s"},
				{gateway: "default/example-gateway", routeConfig: "listener~80", vhost: "listener~80~example-retry-and-timeouts_com",
					route: "listener~80~example-retry-and-timeouts_com-route-1-httproute-example-route-retry-and-timeouts-default-0-0-matcher-0",
					origins: map[string][]string{
						"retry":    {tp("default", "example-route-retry-and-timeouts")},
						"timeouts": {tp("default", "example-route-retry-and-timeouts")},
					}, timeout: "10s", retries: 5},
				{gateway: "default/example-gateway", routeConfig: "listener~80", vhost: "listener~80~example-retry_com",
					route:   "listener~80~example-retry_com-route-0-httproute-example-route-retry-default-0-0-rule0-matcher-0",
					origins: map[string][]string{"retry": {tp("default", "example-route-retry")}}, retries: 2},
			},
		},
	}
	ctx := context.Background()
	bin, dir, err := Binary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	inputs := make([][]byte, len(cases))
	for i, c := range cases {
		b, err := os.ReadFile(filepath.Join(dir, "pkg/kgateway/translator/gateway/testutils/inputs", c.input))
		if err != nil {
			t.Fatal(err)
		}
		inputs[i] = b
	}
	results, err := Run(ctx, bin, dir, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		for _, w := range c.want {
			got, ok := find(results[i], w)
			if !ok {
				t.Errorf("%s: no %s %s %s %q", c.input, w.gateway, w.routeConfig, w.vhost, w.route)
				continue
			}
			if !reflect.DeepEqual(got, w) {
				t.Errorf("%s %s %q:\n got  %+v\n want %+v", c.input, w.vhost, w.route, got, w)
			}
		}
	}
}

// find reads from r what w names, in w's terms.
func find(r *Result, w goldenRoute) (goldenRoute, bool) {
	for _, gw := range r.Gateways {
		if gw.Namespace+"/"+gw.Name != w.gateway {
			continue
		}
		for _, rc := range gw.RouteConfigs {
			if rc.Name != w.routeConfig {
				continue
			}
			for _, vh := range rc.VirtualHosts {
				if vh.Name != w.vhost {
					continue
				}
				got := goldenRoute{gateway: w.gateway, routeConfig: w.routeConfig, vhost: w.vhost, route: w.route}
				if w.route == "" {
					got.origins, got.retries = vh.Origins[tpOrigins], deref(vh.Retries)
					return got, true
				}
				for _, rt := range vh.Routes {
					if rt.Name == w.route {
						got.origins, got.timeout, got.retries = rt.Origins[tpOrigins], rt.Timeout, deref(rt.Retries)
						return got, true
					}
				}
			}
		}
	}
	return goldenRoute{}, false
}

func deref(p *uint32) uint32 {
	if p == nil {
		return 0
	}
	return *p
}
