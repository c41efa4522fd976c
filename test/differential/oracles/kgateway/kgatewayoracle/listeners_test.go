package kgatewayoracle

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func lp(kind, name string) string { return "gateway.kgateway.dev/" + kind + "/default/" + name }

func u32(n uint32) *uint32 { return &n }

// TestGoldenListenersAndClusters runs the oracle on inputs of kgateway's own
// translator golden tests and checks what it reads of Envoy listeners and
// clusters against their golden outputs (testutils/outputs).
func TestGoldenListenersAndClusters(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kgateway's test binary")
	}
	lpOrigins := Origins{"ListenerPolicy.gateway.kgateway.dev": {
		"default.perConnectionBufferLimitBytes": {lp("ListenerPolicy", "proxy-protocol2")},
		"default.proxyProtocol":                 {lp("ListenerPolicy", "proxy-protocol")},
		// proxy-protocol2's perPort entry for 8080 sets proxyProtocol too, which
		// proxy-protocol's lacks; the origins name only the first
		// (docs/differential.md, kgateway, seeds 22 and 48).
		"perPortPolicy[8080]": {lp("ListenerPolicy", "proxy-protocol")},
	}}
	cases := []struct {
		input     string
		listeners []Listener
		clusters  []Cluster
	}{
		{
			// outputs/listener-policy/deep-merge.yaml: default's buffer limit on port 80, perPort's on 8080.
			input: "listener-policy/deep-merge.yaml",
			listeners: []Listener{
				{Name: "listener~80", Port: 80, Origins: lpOrigins, PerConnectionBufferLimitBytes: u32(8192)},
				{Name: "listener~8080", Port: 8080, Origins: lpOrigins, PerConnectionBufferLimitBytes: u32(65536)},
			},
		},
		{
			// outputs/httplistenerpolicy/merge.yaml: misc's stream idle timeout and trusted hops.
			input: "httplistenerpolicy/merge.yaml",
			listeners: []Listener{{Name: "listener~8080", Port: 8080, XffNumTrustedHops: 2, StreamIdleTimeout: "30s",
				Origins: Origins{"HTTPListenerPolicy.gateway.kgateway.dev": {
					"accessLog": {lp("HTTPListenerPolicy", "access-log")}, "accessLogConfig": {lp("HTTPListenerPolicy", "access-log")},
					"healthCheckPolicy": {lp("HTTPListenerPolicy", "misc")}, "mergeStreamIdleTimeout": {lp("HTTPListenerPolicy", "misc")},
					"serverHeaderTransformation": {lp("HTTPListenerPolicy", "misc")}, "tracing": {lp("HTTPListenerPolicy", "tracing")},
					"upgradeConfig": {lp("HTTPListenerPolicy", "misc")}, "useRemoteAddress": {lp("HTTPListenerPolicy", "misc")},
					"xffNumTrustedHops": {lp("HTTPListenerPolicy", "misc")},
				}}}},
		},
		{
			// outputs/backendconfigpolicy/commonhttpprotocol-httpbackend.yaml.
			input: "backendconfigpolicy/commonhttpprotocol-httpbackend.yaml",
			clusters: []Cluster{
				{Name: "kube_default_httpbin_8080", ConnectTimeout: "5s", IdleTimeout: "10s", MaxHeadersCount: u32(15)},
				{Name: "test-backend-plugin_default_example-svc_80", ConnectTimeout: "5s"},
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
		if inputs[i], err = os.ReadFile(filepath.Join(dir, "pkg/kgateway/translator/gateway/testutils/inputs", c.input)); err != nil {
			t.Fatal(err)
		}
	}
	results, err := Run(ctx, bin, dir, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		if len(results[i].Gateways) != 1 {
			t.Fatalf("%s: %d gateways, want 1", c.input, len(results[i].Gateways))
		}
		gw := results[i].Gateways[0]
		if c.listeners != nil && !reflect.DeepEqual(gw.Listeners, c.listeners) {
			t.Errorf("%s listeners:\n got  %+v\n want %+v", c.input, gw.Listeners, c.listeners)
		}
		if c.clusters != nil && !reflect.DeepEqual(gw.Clusters, c.clusters) {
			t.Errorf("%s clusters:\n got  %+v\n want %+v", c.input, gw.Clusters, c.clusters)
		}
	}
}
