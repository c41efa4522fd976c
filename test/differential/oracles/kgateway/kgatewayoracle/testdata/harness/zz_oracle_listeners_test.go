package translator

// Added to kgateway v2.2.0's test/translator package with zz_oracle_harness_test.go: what the
// oracle reads of the Envoy listeners (ListenerPolicy, HTTPListenerPolicy: the merge.<Kind>.<group>
// metadata irtranslator/gateway.go runListenerPlugins writes on each listener, and the settings
// listenerpolicy/listener_plugin.go ApplyListenerPlugin and ApplyHCM write) and clusters
// (BackendConfigPolicy: backendconfigpolicy/plugin.go processBackend, which records no origin).

import (
	"sort"

	envoyclusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoylistenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoyhcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	envoyupstreamhttp "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

type oracleListener struct {
	Name    string                         `json:"name"`
	Port    uint32                         `json:"port"`
	Origins map[string]map[string][]string `json:"origins,omitempty"`
	// The listener's per_connection_buffer_limit_bytes, and of its first HTTP connection
	// manager: xff_num_trusted_hops (0 when unset), stream_idle_timeout,
	// common_http_protocol_options.idle_timeout, max_request_headers_kb.
	PerConnectionBufferLimitBytes *uint32 `json:"perConnectionBufferLimitBytes,omitempty"`
	XffNumTrustedHops             uint32  `json:"xffNumTrustedHops,omitempty"`
	StreamIdleTimeout             string  `json:"streamIdleTimeout,omitempty"`
	IdleTimeout                   string  `json:"idleTimeout,omitempty"`
	MaxRequestHeadersKb           *uint32 `json:"maxRequestHeadersKb,omitempty"`
}

type oracleCluster struct {
	Name                          string  `json:"name"`
	ConnectTimeout                string  `json:"connectTimeout,omitempty"`
	PerConnectionBufferLimitBytes *uint32 `json:"perConnectionBufferLimitBytes,omitempty"`
	// From the upstream HTTP protocol options' common_http_protocol_options.
	IdleTimeout     string  `json:"idleTimeout,omitempty"`
	MaxHeadersCount *uint32 `json:"maxHeadersCount,omitempty"`
}

func oracleListenerOf(l *envoylistenerv3.Listener) oracleListener {
	out := oracleListener{Name: l.GetName(), Origins: oracleOrigins(l.GetMetadata()),
		Port: l.GetAddress().GetSocketAddress().GetPortValue(), PerConnectionBufferLimitBytes: oracleUint32(l.GetPerConnectionBufferLimitBytes())}
	for _, fc := range l.GetFilterChains() {
		for _, f := range fc.GetFilters() {
			var hcm envoyhcm.HttpConnectionManager
			if f.GetTypedConfig() == nil || f.GetTypedConfig().UnmarshalTo(&hcm) != nil {
				continue
			}
			out.XffNumTrustedHops = hcm.GetXffNumTrustedHops()
			out.StreamIdleTimeout = oracleDuration(hcm.GetStreamIdleTimeout())
			out.IdleTimeout = oracleDuration(hcm.GetCommonHttpProtocolOptions().GetIdleTimeout())
			out.MaxRequestHeadersKb = oracleUint32(hcm.GetMaxRequestHeadersKb())
			return out
		}
	}
	return out
}

func oracleClustersOf(cs []*envoyclusterv3.Cluster) []oracleCluster {
	var out []oracleCluster
	for _, c := range cs {
		oc := oracleCluster{Name: c.GetName(), ConnectTimeout: oracleDuration(c.GetConnectTimeout()),
			PerConnectionBufferLimitBytes: oracleUint32(c.GetPerConnectionBufferLimitBytes())}
		if a := c.GetTypedExtensionProtocolOptions()["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"]; a != nil {
			var opts envoyupstreamhttp.HttpProtocolOptions
			if a.UnmarshalTo(&opts) == nil {
				common := opts.GetCommonHttpProtocolOptions()
				oc.IdleTimeout = oracleDuration(common.GetIdleTimeout())
				oc.MaxHeadersCount = oracleUint32(common.GetMaxHeadersCount())
			}
		}
		out = append(out, oc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func oracleUint32(v *wrapperspb.UInt32Value) *uint32 {
	if v == nil {
		return nil
	}
	n := v.GetValue()
	return &n
}

func oracleDuration(d *durationpb.Duration) string {
	if d == nil {
		return ""
	}
	return d.AsDuration().String()
}
