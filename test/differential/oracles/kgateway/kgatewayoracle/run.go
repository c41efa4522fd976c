package kgatewayoracle

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Origins are, per policy kind ("TrafficPolicy.gateway.kgateway.dev"), per merge unit
// ("timeouts", "rateLimit.local", ...), the policies the unit came from
// ("gateway.kgateway.dev/TrafficPolicy/<namespace>/<name>"): the merge.<Kind>.<group> filter
// metadata kgateway writes (irtranslator/route.go, policy.go addMergeOriginsToFilterMetadata).
type Origins map[string]map[string][]string

// Route is one Envoy route: one match of one route rule.
type Route struct {
	Name    string  `json:"name"`
	Prefix  string  `json:"prefix,omitempty"`
	Path    string  `json:"path,omitempty"`
	Regex   string  `json:"regex,omitempty"`
	Origins Origins `json:"origins,omitempty"`
	// Timeout is the route action's timeout (a Go duration), Retries its retry policy's num_retries.
	Timeout string  `json:"timeout,omitempty"`
	Retries *uint32 `json:"retries,omitempty"`
	// Direct: the route has no route action (a direct response).
	Direct bool `json:"direct,omitempty"`
}

// VirtualHost is one Envoy virtual host: the routes of one listener for one hostname.
type VirtualHost struct {
	Name    string   `json:"name"`
	Domains []string `json:"domains"`
	Origins Origins  `json:"origins,omitempty"`
	Retries *uint32  `json:"retries,omitempty"`
	Routes  []Route  `json:"routes"`
}

// RouteConfig is one Envoy route configuration ("listener~<port>").
type RouteConfig struct {
	Name         string        `json:"name"`
	Origins      Origins       `json:"origins,omitempty"`
	VirtualHosts []VirtualHost `json:"virtualHosts"`
}

// Listener is one Envoy listener (one port of a Gateway): the ListenerPolicy and
// HTTPListenerPolicy merge origins (irtranslator/gateway.go runListenerPlugins) and the settings
// those kinds write (listenerpolicy/listener_plugin.go), of the listener and of its first HTTP
// connection manager; durations as Go durations.
type Listener struct {
	Name                          string  `json:"name"`
	Port                          uint32  `json:"port"`
	Origins                       Origins `json:"origins,omitempty"`
	PerConnectionBufferLimitBytes *uint32 `json:"perConnectionBufferLimitBytes,omitempty"`
	XffNumTrustedHops             uint32  `json:"xffNumTrustedHops,omitempty"`
	StreamIdleTimeout             string  `json:"streamIdleTimeout,omitempty"`
	IdleTimeout                   string  `json:"idleTimeout,omitempty"`
	MaxRequestHeadersKb           *uint32 `json:"maxRequestHeadersKb,omitempty"`
}

// Cluster is one Envoy cluster and the settings a BackendConfigPolicy writes
// (backendconfigpolicy/plugin.go processBackend; it records no merge origin).
type Cluster struct {
	Name                          string  `json:"name"`
	ConnectTimeout                string  `json:"connectTimeout,omitempty"`
	PerConnectionBufferLimitBytes *uint32 `json:"perConnectionBufferLimitBytes,omitempty"`
	// From the upstream HTTP protocol options' common_http_protocol_options.
	IdleTimeout     string  `json:"idleTimeout,omitempty"`
	MaxHeadersCount *uint32 `json:"maxHeadersCount,omitempty"`
}

// Gateway is what kgateway translates one Gateway into.
type Gateway struct {
	Namespace    string        `json:"namespace"`
	Name         string        `json:"name"`
	RouteConfigs []RouteConfig `json:"routeConfigs"`
	Listeners    []Listener    `json:"listeners,omitempty"`
	Clusters     []Cluster     `json:"clusters,omitempty"`
}

// Result is kgateway's translation of one input: every Gateway's route configurations and the
// statuses (test/translator Statuses, as the golden files hold them).
type Result struct {
	Gateways []Gateway      `json:"gateways"`
	Statuses map[string]any `json:"statuses,omitempty"`
}

// SourceName turns an origin ("<group>/<Kind>/<namespace>/<name>") into "namespace/name".
func SourceName(ref string) string {
	parts := strings.Split(ref, "/")
	if len(parts) < 2 {
		return ref
	}
	return parts[len(parts)-2] + "/" + parts[len(parts)-1]
}

// Run answers every input (a multi-document YAML of Gateway API objects and kgateway policies)
// with one run of the oracle binary bin in dir (both from Binary), in order. kgateway's harness
// stamps each input's objects one second apart in the order they are listed (TestCase.Run), so
// the order of the input is the age of its objects.
func Run(ctx context.Context, bin, dir string, inputs ...[]byte) ([]*Result, error) {
	if len(inputs) == 0 {
		return nil, nil
	}
	tmp, err := os.MkdirTemp("", "kgateway-oracle-run-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	files := make([]string, len(inputs))
	for i, in := range inputs {
		files[i] = filepath.Join(tmp, fmt.Sprintf("in-%d.yaml", i))
		if err := os.WriteFile(files[i], in, 0o644); err != nil {
			return nil, err
		}
	}
	cmd := exec.CommandContext(ctx, bin, "-test.run", "^TestEffectivePolicyOracle$", "-test.count", "1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KGW_ORACLE_INPUTS="+strings.Join(files, ":"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("kgateway oracle: %w\n%s", err, tail(out, 8000))
	}
	results := make([]*Result, len(inputs))
	for i, f := range files {
		b, err := os.ReadFile(f + ".json")
		if err != nil {
			return nil, err
		}
		results[i] = &Result{}
		if err := json.Unmarshal(b, results[i]); err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
	}
	return results, nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
