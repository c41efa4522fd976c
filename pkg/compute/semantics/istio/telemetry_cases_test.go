package istio

import "testing"

// Telemetry specs of Istio's own tests (istio.io/istio release-1.31, pilot/pkg/model), as YAML
// would write them.
const (
	// telemetry_test.go TestTracing
	trEnvoy          = `{"tracing":[{"providers":[{"name":"envoy"}]}]}`
	trStackdriver    = `{"tracing":[{"providers":[{"name":"stackdriver"}]}]}`
	trEmpty          = `{"tracing":[{}]}`
	trDisabled       = `{"tracing":[{"disableSpanReporting":true}]}`
	trOverridesA     = `{"tracing":[{"randomSamplingPercentage":50,"customTags":{"foo":{},"bar":{}},"useRequestIdForTraceSampling":false,"enableIstioTags":false}]}`
	trOverridesB     = `{"tracing":[{"randomSamplingPercentage":80,"customTags":{"foo":{},"baz":{}},"useRequestIdForTraceSampling":true,"enableIstioTags":true}]}`
	trClientSampling = `{"tracing":[{"match":{"mode":"CLIENT"},"providers":[{"name":"stackdriver"}],"randomSamplingPercentage":99.9}]}`
	trServerDisabled = `{"tracing":[{"match":{"mode":"SERVER"},"disableSpanReporting":true}]}`
	// telemetry_logging_test.go TestAccessLogging
	alEnvoy         = `{"accessLogging":[{"providers":[{"name":"envoy"}]}]}`
	alClient        = `{"accessLogging":[{"match":{"mode":"CLIENT"},"providers":[{"name":"envoy"}]}]}`
	alClientOff     = `{"accessLogging":[{"match":{"mode":"CLIENT"},"providers":[{"name":"envoy"}],"disabled":true}]}`
	alServer        = `{"accessLogging":[{"match":{"mode":"SERVER"},"providers":[{"name":"envoy"}]}]}`
	alEmpty         = `{"accessLogging":[{}]}`
	alDisabled      = `{"accessLogging":[{"disabled":true}]}`
	alDefaultJSON   = `{"accessLogging":[{"providers":[{"name":"envoy-json"}]}]}`
	alMulti         = `{"accessLogging":[{"providers":[{"name":"envoy"}]},{"providers":[{"name":"envoy-json"}]}]}`
	alMultiDisabled = `{"accessLogging":[{"providers":[{"name":"envoy"}]},{"providers":[{"name":"envoy-json"}],"disabled":true}]}`
	alDifferent     = `{"accessLogging":[{"match":{"mode":"SERVER"},"providers":[{"name":"envoy"}]},{"match":{"mode":"CLIENT"},"providers":[{"name":"envoy-json"}]}]}`
	// telemetry_logging_test.go TestAccessLoggingWithFilter
	alFilterCode = `{"accessLogging":[{"providers":[{"name":"envoy"}],"filter":{"expression":"response.code >= 400"}}]}`
	alFilterDur  = `{"accessLogging":[{"providers":[{"name":"envoy"}],"filter":{"expression":"response.duration > 1000"}}]}`
	// telemetry_metric_test.go TestMergeMetrics
	mPrometheus    = `{"metrics":[{"providers":[{"name":"prometheus"}]}]}`
	mDisableServer = `{"metrics":[{"providers":[{"name":"prometheus"}],"overrides":[{"match":{"metric":"ALL_METRICS","mode":"SERVER"},"disabled":true}]}]}`
	mServerCustom  = `{"metrics":[{"providers":[{"name":"prometheus"}],"overrides":[{"match":{"metric":"ALL_METRICS","mode":"SERVER"},"disabled":true},{"match":{"metric":"REQUEST_COUNT","mode":"CLIENT"},"tagOverrides":{"destination_canonical_service":{"operation":"REMOVE"}}}]}]}`
	mInterval      = `{"metrics":[{"reportingInterval":"10s"}]}`
	mStackdriver   = `{"metrics":[{"providers":[{"name":"stackdriver"}]}]}`
)

// telemetryFoldCase is a context of Telemetries and what Istio makes of it: the merged spec, the
// field sources and each policy's outcome.
type telemetryFoldCase struct {
	name, flavor string
	ps           []telemetryPolicy
	spec, fs     string
	outcomes     string
}

func rootTel(name, spec string) telemetryPolicy {
	return telemetryPolicy{RootNamespace, name, "", spec}
}
func nsTel(name, spec string) telemetryPolicy { return telemetryPolicy{"bar", name, "", spec} }
func toTel(target, name, spec string) telemetryPolicy {
	return telemetryPolicy{"bar", name, target, spec}
}

// telemetryFoldCases: the Telemetries reaching a Gateway (CLIENT mode) or a waypoint (SERVER
// mode), merged as Istio merges them (telemetry.go applicableTelemetries, Tracing, mergeLogs,
// mergeMetrics). Case names are upstream's, with the test function.
var telemetryFoldCases = []telemetryFoldCase{
	{"TestTracing provider only", flavorGateway, []telemetryPolicy{rootTel("default", trEnvoy)},
		`{"tracing":[{"providers":[{"name":"envoy"}]}]}`, "/tracing/0/providers=istio-system/default",
		"istio-system/default Enforced"},
	{"TestTracing override namespace", flavorGateway, []telemetryPolicy{rootTel("default", trEnvoy), nsTel("default", trStackdriver)},
		`{"tracing":[{"providers":[{"name":"stackdriver"}]}]}`, "/tracing/0/providers=bar/default",
		"istio-system/default Overridden, bar/default Enforced"},
	{"TestTracing empty config inherits", flavorGateway, []telemetryPolicy{rootTel("default", trEnvoy), nsTel("default", trEmpty)},
		`{"tracing":[{"providers":[{"name":"envoy"}]}]}`, "/tracing/0/providers=istio-system/default",
		"istio-system/default Enforced, bar/default Enforced"},
	{"TestTracing disable config", flavorGateway, []telemetryPolicy{rootTel("default", trEnvoy), nsTel("default", trDisabled)},
		`{"tracing":[{"disableSpanReporting":true,"providers":[{"name":"envoy"}]}]}`,
		"/tracing/0/disableSpanReporting=bar/default /tracing/0/providers=istio-system/default",
		"istio-system/default Enforced, bar/default Enforced"},
	{"TestTracing multi overrides", flavorGateway, []telemetryPolicy{rootTel("default", trOverridesA), nsTel("default", trOverridesB)},
		`{"tracing":[{"customTags":{"baz":{},"foo":{}},"enableIstioTags":true,"randomSamplingPercentage":80,"useRequestIdForTraceSampling":true}]}`,
		"/tracing/0/customTags/baz=bar/default /tracing/0/customTags/foo=bar/default /tracing/0/enableIstioTags=bar/default /tracing/0/randomSamplingPercentage=bar/default /tracing/0/useRequestIdForTraceSampling=bar/default",
		"istio-system/default Overridden, bar/default Enforced"},
	{"TestTracing client-only override (a Gateway is a client)", flavorGateway, []telemetryPolicy{rootTel("default", trEnvoy), nsTel("default", trClientSampling)},
		`{"tracing":[{"providers":[{"name":"stackdriver"}],"randomSamplingPercentage":99.9}]}`,
		"/tracing/0/providers=bar/default /tracing/0/randomSamplingPercentage=bar/default",
		"istio-system/default Overridden, bar/default Enforced"},
	{"TestTracing server-only override (a waypoint is a server)", flavorWaypoint + "bar/svc",
		[]telemetryPolicy{toTel("svc", "envoy", trEnvoy), toTel("svc", "server", trServerDisabled)},
		`{"tracing":[{"disableSpanReporting":true,"providers":[{"name":"envoy"}]}]}`,
		"/tracing/0/disableSpanReporting=bar/server /tracing/0/providers=bar/envoy",
		"bar/envoy Enforced, bar/server Enforced"},
	{"TestTracing server-only override leaves a Gateway alone", flavorGateway,
		[]telemetryPolicy{rootTel("default", trEnvoy), nsTel("default", trServerDisabled)},
		`{"tracing":[{"providers":[{"name":"envoy"}]}]}`, "/tracing/0/providers=istio-system/default",
		"istio-system/default Enforced, bar/default Enforced"},
	{"TestAccessLogging override namespace", flavorGateway, []telemetryPolicy{rootTel("default", alEnvoy), nsTel("default", alDefaultJSON)},
		`{"accessLogging":[{"providers":[{"name":"envoy-json"}]}]}`, "/accessLogging/0/providers=bar/default",
		"istio-system/default Overridden, bar/default Enforced"},
	{"TestAccessLogging empty config inherits", flavorGateway, []telemetryPolicy{rootTel("default", alEnvoy), nsTel("default", alEmpty)},
		`{"accessLogging":[{"providers":[{"name":"envoy"}]}]}`, "/accessLogging/0/providers=istio-system/default",
		"istio-system/default Enforced, bar/default Enforced"},
	{"TestAccessLogging disable config", flavorGateway, []telemetryPolicy{rootTel("default", alEnvoy), nsTel("default", alDisabled)},
		`{"accessLogging":[{"disabled":true,"providers":[{"name":"envoy"}]}]}`,
		"/accessLogging/0/disabled=bar/default /accessLogging/0/providers=istio-system/default",
		"istio-system/default Enforced, bar/default Enforced"},
	{"TestAccessLogging disable default", flavorGateway, []telemetryPolicy{nsTel("default", alDisabled)},
		`{"accessLogging":[{"disabled":true}]}`, "/accessLogging/0/disabled=bar/default", "bar/default Enforced"},
	{"TestAccessLogging client - disabled - enabled", flavorGateway,
		[]telemetryPolicy{rootTel("default", alClient), nsTel("default", alClientOff), toTel("sel", "sidecar-client", alClient)},
		`{"accessLogging":[{"providers":[{"name":"envoy"}]}]}`, "/accessLogging/0/providers=bar/sidecar-client",
		"istio-system/default Overridden, bar/default Overridden, bar/sidecar-client Enforced"},
	{"TestAccessLogging server - gateway", flavorGateway, []telemetryPolicy{rootTel("default", alServer)},
		`{}`, "=istio-system/default", "istio-system/default Enforced"},
	{"TestAccessLogging multi accesslogging", flavorGateway, []telemetryPolicy{rootTel("default", alEnvoy), nsTel("default", alMulti)},
		`{"accessLogging":[{"providers":[{"name":"envoy"}]},{"providers":[{"name":"envoy-json"}]}]}`,
		"/accessLogging/0/providers=bar/default /accessLogging/1/providers=bar/default",
		"istio-system/default Overridden, bar/default Enforced"},
	{"TestAccessLogging multi accesslogging with disabled", flavorGateway, []telemetryPolicy{rootTel("default", alEnvoy), nsTel("default", alMultiDisabled)},
		`{"accessLogging":[{"providers":[{"name":"envoy"}]},{"disabled":true,"providers":[{"name":"envoy-json"}]}]}`,
		"/accessLogging/0/providers=bar/default /accessLogging/1/disabled=bar/default /accessLogging/1/providers=bar/default",
		"istio-system/default Overridden, bar/default Enforced"},
	{"TestAccessLogging server and client different - outbound", flavorGateway, []telemetryPolicy{rootTel("default", alDifferent)},
		`{"accessLogging":[{"providers":[{"name":"envoy-json"}]}]}`, "/accessLogging/0/providers=istio-system/default",
		"istio-system/default Enforced"},
	{"TestAccessLoggingWithFilter: the namespace's filter replaces the root's", flavorGateway,
		[]telemetryPolicy{rootTel("default", alFilterCode), nsTel("default", alFilterDur)},
		`{"accessLogging":[{"filter":{"expression":"response.duration > 1000"},"providers":[{"name":"envoy"}]}]}`,
		"/accessLogging/0/filter/expression=bar/default /accessLogging/0/providers=bar/default",
		"istio-system/default Overridden, bar/default Enforced"},
	{"TestMergeMetrics enable all metrics", flavorGateway, []telemetryPolicy{nsTel("default", mPrometheus)},
		`{"metrics":[{"providers":[{"name":"prometheus"}]}]}`, "/metrics/0/providers=bar/default", "bar/default Enforced"},
	{"TestMergeMetrics disable server metrics: not a Gateway's", flavorGateway, []telemetryPolicy{nsTel("default", mDisableServer)},
		`{"metrics":[{"providers":[{"name":"prometheus"}]}]}`, "/metrics/0/providers=bar/default", "bar/default Enforced"},
	{"TestMergeMetrics disable server and custom client metrics", flavorGateway, []telemetryPolicy{nsTel("default", mServerCustom)},
		`{"metrics":[{"overrides":[{"match":{"metric":"REQUEST_COUNT","mode":"CLIENT"},"tagOverrides":{"destination_canonical_service":{"operation":"REMOVE"}}}],"providers":[{"name":"prometheus"}]}]}`,
		"/metrics/0/overrides/0/match/metric=bar/default /metrics/0/overrides/0/match/mode=bar/default /metrics/0/overrides/0/tagOverrides/destination_canonical_service/operation=bar/default /metrics/0/providers=bar/default",
		"bar/default Enforced"},
	{"TestMergeMetrics: an entry without providers takes the previous one's", flavorGateway,
		[]telemetryPolicy{rootTel("default", mDisableServer), nsTel("default", mInterval)},
		`{"metrics":[{"providers":[{"name":"prometheus"}],"reportingInterval":"10s"}]}`,
		"/metrics/0/providers=istio-system/default /metrics/0/reportingInterval=bar/default",
		"istio-system/default Enforced, bar/default Enforced"},
	{"TestMergeMetrics: a provider named later replaces the earlier", flavorGateway,
		[]telemetryPolicy{rootTel("default", mPrometheus), nsTel("default", mStackdriver)},
		`{"metrics":[{"providers":[{"name":"stackdriver"}]}]}`, "/metrics/0/providers=bar/default",
		"istio-system/default Overridden, bar/default Enforced"},
	// applicableTelemetries and namespaceWideTelemetryConfig (telemetry.go); upstream's
	// Test_appendApplicableTelemetries appends every workload Telemetry after the namespace's.
	{"the root namespace's comes first although newer", flavorGateway,
		[]telemetryPolicy{nsTel("default", trStackdriver), rootTel("default", trEnvoy)},
		`{"tracing":[{"providers":[{"name":"stackdriver"}]}]}`, "/tracing/0/providers=bar/default",
		"bar/default Enforced, istio-system/default Overridden"},
	{"a younger namespace-wide Telemetry is never read", flavorGateway,
		[]telemetryPolicy{nsTel("a-old", trEnvoy), nsTel("b-young", trStackdriver)},
		`{"tracing":[{"providers":[{"name":"envoy"}]}]}`, "/tracing/0/providers=bar/a-old",
		"bar/a-old Enforced, bar/b-young Conflicted by bar/a-old"},
	{"an empty selector is namespace-wide", flavorGateway,
		[]telemetryPolicy{nsTel("a-old", trEnvoy), {"bar", "b-empty-selector", "", `{"selector":{},"tracing":[{"providers":[{"name":"stackdriver"}]}]}`}},
		`{"tracing":[{"providers":[{"name":"envoy"}]}]}`, "/tracing/0/providers=bar/a-old",
		"bar/a-old Enforced, bar/b-empty-selector Conflicted by bar/a-old"},
	{"every workload Telemetry applies by age, targetRef or selector", flavorGateway,
		[]telemetryPolicy{nsTel("default", trEnvoy), toTel("gw", "by-ref", trOverridesA), toTel("sel", "by-selector", trDisabled)},
		`{"tracing":[{"customTags":{"bar":{},"foo":{}},"disableSpanReporting":true,"enableIstioTags":false,"providers":[{"name":"envoy"}],"randomSamplingPercentage":50,"useRequestIdForTraceSampling":false}]}`,
		"/tracing/0/customTags/bar=bar/by-ref /tracing/0/customTags/foo=bar/by-ref /tracing/0/disableSpanReporting=bar/by-selector /tracing/0/enableIstioTags=bar/by-ref /tracing/0/providers=bar/default /tracing/0/randomSamplingPercentage=bar/by-ref /tracing/0/useRequestIdForTraceSampling=bar/by-ref",
		"bar/default Enforced, bar/by-ref Enforced, bar/by-selector Enforced"},
	{"a waypoint takes the Telemetries on its Service only", flavorWaypoint + "bar/svc",
		[]telemetryPolicy{rootTel("default", trEnvoy), nsTel("default", trDisabled), toTel("svc", "on-svc", trStackdriver)},
		`{"tracing":[{"providers":[{"name":"stackdriver"}]}]}`, "/tracing/0/providers=bar/on-svc",
		"istio-system/default Apart, bar/default Apart, bar/on-svc Enforced"},
}

func TestTelemetryFold(t *testing.T) {
	for _, c := range telemetryFoldCases {
		t.Run(c.name, func(t *testing.T) {
			spec, fs, outs := telemetryFoldOf(t, c.ps, c.flavor)
			if spec != c.spec || fs != c.fs || outs != c.outcomes {
				t.Errorf("got  %s\n     %s\n     %s\nwant %s\n     %s\n     %s", spec, fs, outs, c.spec, c.fs, c.outcomes)
			}
		})
	}
}
