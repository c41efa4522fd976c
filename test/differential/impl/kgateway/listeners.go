package kgateway

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// kgListener is an Envoy listener of the oracle's output (kgatewayoracle Listener).
type kgListener struct {
	Name                          string    `json:"name"`
	Port                          uint32    `json:"port"`
	Origins                       kgOrigins `json:"origins"`
	PerConnectionBufferLimitBytes *uint32   `json:"perConnectionBufferLimitBytes"`
	XffNumTrustedHops             uint32    `json:"xffNumTrustedHops"`
	StreamIdleTimeout             string    `json:"streamIdleTimeout"`
	IdleTimeout                   string    `json:"idleTimeout"`
	MaxRequestHeadersKb           *uint32   `json:"maxRequestHeadersKb"`
}

// kgCluster is an Envoy cluster of the oracle's output (kgatewayoracle Cluster).
type kgCluster struct {
	Name                          string  `json:"name"`
	ConnectTimeout                string  `json:"connectTimeout"`
	PerConnectionBufferLimitBytes *uint32 `json:"perConnectionBufferLimitBytes"`
	IdleTimeout                   string  `json:"idleTimeout"`
	MaxHeadersCount               *uint32 `json:"maxHeadersCount"`
}

// originKeys name, per generated listener setting, the merge origin
// listenerpolicy/merge.go and merge_http.go record for it (the stream and
// idle timeouts named after their merge functions); a ListenerPolicy's
// carry "default." or "perPortPolicy[<port>]." before them.
var originKeys = map[string]string{
	"/xffNumTrustedHops":                "xffNumTrustedHops",
	"/streamIdleTimeout":                "mergeStreamIdleTimeout",
	"/perConnectionBufferLimitBytes":    "perConnectionBufferLimitBytes",
	"/httpSettings/maxRequestHeadersKb": "httpSettings.maxRequestHeadersKb",
	"/httpSettings/idleTimeout":         "httpSettings.mergeIdleTimeout",
}

// kgListenerChecks compares, per Envoy listener of a Gateway (one port, one
// Gateway listener: the generator gives each its own port), the
// HTTPListenerPolicy and ListenerPolicy each setting came from (the merge
// origins kgateway writes on the listener) and the values Envoy is given.
func kgListenerChecks(objs []*unstructured.Unstructured, ours *differential.Ours, gwNS, gw string, l kgListener) ([]differential.Check, error) {
	section, ok := listenerOfPort(objs, gwNS, gw, "listener~"+strconv.FormatUint(uint64(l.Port), 10))
	if !ok {
		return nil, nil
	}
	target := differential.Node{Kind: "Gateway", Namespace: gwNS, Name: gw, Section: section}
	path := []differential.Node{{Kind: "Gateway", Namespace: gwNS, Name: gw}, target}
	subject := fmt.Sprintf("Gateway %s/%s listener %s (port %d)", gwNS, gw, section, l.Port)
	var checks []differential.Check
	mk := func(kind, field, theirs, oursV string) {
		checks = append(checks, differential.Check{Kind: kind, Subject: subject, Field: field, Theirs: theirs, Ours: oursV, Target: target, Path: path})
	}
	hlp, hlpSources, err := ours.Effective(target, gen.KgatewayGroup, gen.HLP, path)
	if err != nil {
		return nil, err
	}
	hlpOrigins := l.Origins[gen.HLP+"."+gen.KgatewayGroup]
	h := differential.EffectiveSpec{Spec: hlp, Sources: hlpSources}
	for _, f := range gen.KgatewayHLPFields {
		mk(gen.HLP, f.Pointer, originNames(hlpOrigins[originKeys[f.Pointer]]), unitSources(hlpSources, f.Pointer))
	}
	xff := ""
	if l.XffNumTrustedHops != 0 {
		xff = strconv.FormatUint(uint64(l.XffNumTrustedHops), 10)
	}
	mk(gen.HLP, "/xffNumTrustedHops (Envoy)", xff, h.Value("/xffNumTrustedHops"))
	mk(gen.HLP, "/streamIdleTimeout (Envoy)", differential.Duration(l.StreamIdleTimeout), h.Value("/streamIdleTimeout"))

	lp, lpSources, err := ours.Effective(target, gen.KgatewayGroup, gen.LP, path)
	if err != nil {
		return nil, err
	}
	lpChecks(lp, lpSources, l, mk)
	return checks, nil
}

// lpChecks: the ListenerPolicy's default settings and the policies of the
// listener's port in perPort, by origin, and the values Envoy is given at
// the port: kgateway uses the merged perPort entry of the port when there is
// one, whole, else default (listener_plugin.go getPolicy).
func lpChecks(lp map[string]any, sources map[string]string, l kgListener, mk func(kind, field, theirs, ours string)) {
	origins := l.Origins[gen.LP+"."+gen.KgatewayGroup]
	for _, f := range gen.KgatewayLPFields {
		mk(gen.LP, "/default"+f.Pointer, originNames(origins["default."+originKeys[f.Pointer]]), unitSources(sources, "/default"+f.Pointer))
	}
	portKey := fmt.Sprintf("perPortPolicy[%d]", l.Port)
	var theirs []string
	for k, v := range origins {
		if k == portKey || strings.HasPrefix(k, portKey+".") {
			theirs = append(theirs, v...)
		}
	}
	// The settings in effect at the port: the perPort entry's listener, else default.
	def, _ := lp["default"].(map[string]any)
	e := differential.EffectiveSpec{Spec: def}
	oursPort := ""
	items, _ := lp["perPort"].([]any)
	for i, it := range items {
		m, _ := it.(map[string]any)
		if differential.Scalar(m["port"]) == strconv.FormatUint(uint64(l.Port), 10) {
			listener, _ := m["listener"].(map[string]any)
			e = differential.EffectiveSpec{Spec: listener}
			oursPort = unitSources(sources, fmt.Sprintf("/perPort/%d", i))
		}
	}
	mk(gen.LP, fmt.Sprintf("/perPort[port=%d]", l.Port), originNames(theirs), oursPort)
	mk(gen.LP, "perConnectionBufferLimitBytes (Envoy)", optUint(l.PerConnectionBufferLimitBytes), e.Value("/perConnectionBufferLimitBytes"))
	mk(gen.LP, "httpSettings/maxRequestHeadersKb (Envoy)", optUint(l.MaxRequestHeadersKb), e.Value("/httpSettings/maxRequestHeadersKb"))
	mk(gen.LP, "httpSettings/idleTimeout (Envoy)", differential.Duration(l.IdleTimeout), e.Value("/httpSettings/idleTimeout"))
}

func optUint(v *uint32) string {
	if v == nil {
		return ""
	}
	return strconv.FormatUint(uint64(*v), 10)
}

// kgDefaultConnectTimeout is the connect timeout kgateway gives every
// cluster a policy does not set (irtranslator/backend.go clusterConnectionTimeout).
const kgDefaultConnectTimeout = "5s"

// kgClusterChecks compares, for the cluster of a generated backend Service
// (kube_<namespace>_<name>_<port>, ir.BackendObjectIR ClusterName), the
// values the BackendConfigPolicies leave on it: kgateway records no origin
// for them, and each value names the policy it came from.
func kgClusterChecks(ours *differential.Ours, c kgCluster) ([]differential.Check, error) {
	parts := strings.Split(c.Name, "_")
	if len(parts) != 4 || parts[0] != "kube" || parts[2] != "backend" {
		return nil, nil
	}
	target := differential.Node{Kind: "Service", Namespace: parts[1], Name: parts[2]}
	path := []differential.Node{target}
	spec, sources, err := ours.Effective(target, gen.KgatewayGroup, gen.BCP, path)
	if err != nil {
		return nil, err
	}
	e := differential.EffectiveSpec{Spec: spec, Sources: sources}
	connect := e.Value("/connectTimeout")
	if connect == "" {
		connect = kgDefaultConnectTimeout
	}
	subject := fmt.Sprintf("Service %s/%s (cluster %s)", target.Namespace, target.Name, c.Name)
	mk := func(field, theirs, oursV string) differential.Check {
		return differential.Check{Kind: gen.BCP, Subject: subject, Field: field, Theirs: theirs, Ours: oursV, Target: target, Path: path}
	}
	return []differential.Check{
		mk("/connectTimeout", differential.Duration(c.ConnectTimeout), connect),
		mk("/perConnectionBufferLimitBytes", optUint(c.PerConnectionBufferLimitBytes), e.Value("/perConnectionBufferLimitBytes")),
		mk("/commonHttpProtocolOptions/idleTimeout", differential.Duration(c.IdleTimeout), e.Value("/commonHttpProtocolOptions/idleTimeout")),
		mk("/commonHttpProtocolOptions/maxHeadersCount", optUint(c.MaxHeadersCount), e.Value("/commonHttpProtocolOptions/maxHeadersCount")),
	}, nil
}
