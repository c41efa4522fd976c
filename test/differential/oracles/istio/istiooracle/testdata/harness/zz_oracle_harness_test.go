package model

// This file is not part of the effectivepolicy module (it sits under testdata/, which the Go tool
// ignores). The Istio oracle copies it into a copy of istio.io/istio's pilot/pkg/model package
// (whose other _test.go files it removes, leak_test.go's TestMain among them) and builds that
// package's test binary, so that the selection and ordering below are Istio's own:
// GetAuthorizationPolicies + ListAuthorizationPolicies, initAuthenticationPolicies +
// GetJwtPoliciesForWorkload, initTrafficExtensions + TrafficExtensionsByListenerInfo (WasmPlugins
// turned into TrafficExtensions by pilot/pkg/config/kube/extensions/translate.go, copied in as
// zz_oracle_translate_test.go), getTelemetries + applicableTelemetries + Tracing, initEnvoyFilters
// + EnvoyFilters. Only reading
// the input, the gateway pods' labels (Istio's deployment template) and writing the answer are
// ours.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"
	"testing"

	kubeyaml "k8s.io/apimachinery/pkg/util/yaml"

	extensions "istio.io/api/extensions/v1alpha1"
	"istio.io/istio/pilot/pkg/config/kube/crd"
	"istio.io/istio/pilot/pkg/serviceregistry/provider"
	"istio.io/istio/pkg/config"
	"istio.io/istio/pkg/config/host"
	"istio.io/istio/pkg/config/mesh"
	"istio.io/istio/pkg/config/mesh/meshwatcher"
	"istio.io/istio/pkg/config/schema/collections"
	"istio.io/istio/pkg/config/schema/gvk"
	"istio.io/istio/pkg/config/schema/resource"
)

// TestMain answers every input file named in ISTIO_ORACLE_INPUTS (separated by ':'), writing
// <input>.json next to each, and runs no Go test.
func TestMain(m *testing.M) {
	inputs := os.Getenv("ISTIO_ORACLE_INPUTS")
	if inputs == "" {
		fmt.Fprintln(os.Stderr, "ISTIO_ORACLE_INPUTS is empty: nothing to answer")
		os.Exit(2)
	}
	code := 0
	for _, in := range strings.Split(inputs, ":") {
		if err := answerFile(in); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", in, err)
			code = 1
		}
	}
	os.Exit(code)
}

func answerFile(in string) error {
	b, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	res, err := oracleAnswer(b)
	if err != nil {
		return err
	}
	out, err := json.MarshalIndent(res, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(in+".json", out, 0o644)
}

// oracleRootNamespace is meshConfig's default rootNamespace (istio-system).
var oracleRootNamespace = mesh.DefaultMeshConfig().GetRootNamespace()

// oracleIstioController is the controllerName of the GatewayClasses Istio's gateway controller
// serves (and the built-in class "istio" uses).
const oracleIstioController = "istio.io/gateway-controller"

type oracleResult struct {
	RootNamespace string           `json:"rootNamespace"`
	Gateways      []oracleWorkload `json:"gateways"`
	Services      []oracleWorkload `json:"services"`
	Invalid       []string         `json:"invalid,omitempty"`
	Ignored       []string         `json:"ignored,omitempty"`
}

// oracleWorkload is what applies to one Istio gateway (or the waypoint serving one Service).
type oracleWorkload struct {
	Namespace string            `json:"namespace"`
	Name      string            `json:"name"`
	Labels    map[string]string `json:"labels,omitempty"`
	// AuthorizationPolicies by action (CUSTOM, AUDIT, DENY, ALLOW), each in Istio's order.
	AuthorizationPolicies map[string][]string `json:"authorizationPolicies"`
	// RequestAuthentications in Istio's order.
	RequestAuthentications []string `json:"requestAuthentications"`
	// TrafficExtensions by phase (AUTHN, AUTHZ, STATS, UNSPECIFIED), each in Istio's
	// order; a WasmPlugin is named "WasmPlugin ns/name", a TrafficExtension "TrafficExtension ns/name".
	TrafficExtensions map[string][]string `json:"trafficExtensions"`
	// EnvoyFilters by applyTo: the EnvoyFilters ("ns/name") whose patches EnvoyFilters(proxy)
	// merges, in the order it applies them.
	EnvoyFilters map[string][]string `json:"envoyFilters"`
	Telemetry    oracleTelemetry     `json:"telemetry"`
}

// oracleTelemetry is which Telemetries apply: applicableTelemetries' telemetryKey (Root, the
// proxy namespace's, and for a waypoint the Service namespace's namespace-wide Telemetry), the
// selecting or targeting ones in the order applicableTelemetries appends them, and the tracing
// Istio merges from them (Tracing).
type oracleTelemetry struct {
	Root      string          `json:"root,omitempty"`
	Proxy     string          `json:"proxy,omitempty"`
	Namespace string          `json:"namespace,omitempty"`
	Workload  []string        `json:"workload"`
	Tracing   json.RawMessage `json:"tracing,omitempty"`
}

type oracleInput struct {
	configs      []config.Config
	gatewayClass map[string]string // class name -> controllerName
	gateways     []map[string]any
	services     []oracleWorkload
	invalid      []string
	ignored      []string
}

func oracleAnswer(b []byte) (*oracleResult, error) {
	in, err := oracleRead(b)
	if err != nil {
		return nil, err
	}
	store := &oracleStore{}
	for _, c := range in.configs {
		if c.GroupVersionKind == gvk.WasmPlugin {
			if te := translateWasmPlugin(c); te != nil {
				store.data = append(store.data, *te)
			}
			continue
		}
		store.data = append(store.data, c)
	}
	m := mesh.DefaultMeshConfig()
	env := &Environment{ConfigStore: store, Watcher: meshwatcher.NewTestWatcher(m)}
	push := NewPushContext()
	push.Mesh = m
	push.initTrafficExtensions(env)
	push.initEnvoyFilters(env, nil, nil)
	o := &oracleEnv{
		authz:  GetAuthorizationPolicies(env),
		authn:  initAuthenticationPolicies(env),
		tel:    getTelemetries(env),
		push:   push,
		rootNS: m.GetRootNamespace(),
	}
	res := &oracleResult{RootNamespace: m.GetRootNamespace(), Invalid: in.invalid, Ignored: in.ignored}
	for _, gw := range in.gateways {
		meta, _ := gw["metadata"].(map[string]any)
		spec, _ := gw["spec"].(map[string]any)
		ns, _ := meta["namespace"].(string)
		name, _ := meta["name"].(string)
		class, _ := spec["gatewayClassName"].(string)
		if in.gatewayClass[class] != oracleIstioController && class != "istio" {
			res.Ignored = append(res.Ignored, fmt.Sprintf("Gateway %s/%s (class %q is not Istio's)", ns, name, class))
			continue
		}
		labels := oraclePodLabels(gw, name, class)
		proxy := &Proxy{Type: Router, ConfigNamespace: ns, Labels: labels, Metadata: &NodeMetadata{Labels: labels}}
		w := o.workload(proxy, nil)
		w.Namespace, w.Name, w.Labels = ns, name, labels
		res.Gateways = append(res.Gateways, w)
	}
	for _, s := range in.services {
		// The waypoint serving the Service: a Gateway of class istio-waypoint in the Service's
		// namespace, named so that no policy targets it, so that only what reaches it through
		// the Service shows.
		wpName := "zz-oracle-waypoint"
		labels := oraclePodLabels(map[string]any{}, wpName, "istio-waypoint")
		proxy := &Proxy{Type: Waypoint, ConfigNamespace: s.Namespace, Labels: labels, Metadata: &NodeMetadata{Labels: labels}}
		svc := &Service{
			Hostname: host.Name(s.Name + "." + s.Namespace + ".svc.cluster.local"),
			Attributes: ServiceAttributes{
				Name: s.Name, Namespace: s.Namespace, ServiceRegistry: provider.Kubernetes,
			},
		}
		w := o.workload(proxy, svc)
		w.Namespace, w.Name = s.Namespace, s.Name
		res.Services = append(res.Services, w)
	}
	return res, nil
}

type oracleEnv struct {
	authz  *AuthorizationPolicies
	authn  *AuthenticationPolicies
	tel    *Telemetries
	push   *PushContext
	rootNS string
}

func (o *oracleEnv) workload(proxy *Proxy, svc *Service) oracleWorkload {
	matcher := PolicyMatcherForProxy(proxy).WithService(svc)
	w := oracleWorkload{AuthorizationPolicies: map[string][]string{}, TrafficExtensions: map[string][]string{}}
	az := o.authz.ListAuthorizationPolicies(matcher)
	for action, list := range map[string][]AuthorizationPolicy{"CUSTOM": az.Custom, "AUDIT": az.Audit, "DENY": az.Deny, "ALLOW": az.Allow} {
		names := []string{}
		for _, p := range list {
			names = append(names, p.Namespace+"/"+p.Name)
		}
		w.AuthorizationPolicies[action] = names
	}
	w.RequestAuthentications = []string{}
	for _, c := range o.authn.GetJwtPoliciesForWorkload(matcher.WithRootNamespace(o.rootNS)) {
		w.RequestAuthentications = append(w.RequestAuthentications, c.Namespace+"/"+c.Name)
	}
	info := ListenerInfo{}
	if svc != nil {
		info = info.WithService(svc)
	}
	for phase, list := range o.push.TrafficExtensionsByListenerInfo(proxy, info, FilterChainTypeAny) {
		names := []string{}
		for _, te := range list {
			names = append(names, oracleExtensionName(te.Namespace, te.Name))
		}
		w.TrafficExtensions[extensions.TrafficExtension_ExecutionPhase_name[int32(phase)]] = names
	}
	w.EnvoyFilters = o.envoyFilters(proxy)
	w.Telemetry = o.telemetry(proxy, svc)
	return w
}

// envoyFilters lists, per applyTo, the EnvoyFilter of each patch EnvoyFilters(proxy) merges for
// the proxy (it matches without the Services a waypoint serves), in its order: a filter's patches
// are appended together, so a filter with several patches of one applyTo is listed once.
func (o *oracleEnv) envoyFilters(proxy *Proxy) map[string][]string {
	out := map[string][]string{}
	merged := o.push.EnvoyFilters(proxy)
	if merged == nil {
		return out
	}
	for applyTo, patches := range merged.Patches {
		names := []string{}
		for _, cp := range patches {
			if n := len(names); n == 0 || names[n-1] != cp.FullName {
				names = append(names, cp.FullName)
			}
		}
		out[applyTo.String()] = names
	}
	return out
}

func oracleExtensionName(ns, name string) string {
	if base, ok := strings.CutSuffix(name, syntheticMarker); ok {
		return "WasmPlugin " + ns + "/" + base
	}
	return "TrafficExtension " + ns + "/" + name
}

func (o *oracleEnv) telemetry(proxy *Proxy, svc *Service) oracleTelemetry {
	ct := o.tel.applicableTelemetries(proxy, svc)
	out := oracleTelemetry{
		Root: oracleNN(ct.Root.Namespace, ct.Root.Name), Proxy: oracleNN(ct.Proxy.Namespace, ct.Proxy.Name),
		Namespace: oracleNN(ct.Namespace.Namespace, ct.Namespace.Name), Workload: []string{},
	}
	// applicableTelemetries keeps only the last selecting or targeting Telemetry in its key; this
	// is its own loop (same list, same matcher) listing every one it appends.
	namespace := proxy.ConfigNamespace
	if proxy.IsWaypointProxy() && svc != nil && namespace != svc.Attributes.Namespace {
		namespace = svc.Attributes.Namespace
	}
	matcher := PolicyMatcherForProxy(proxy).WithService(svc).WithRootNamespace(o.tel.RootNamespace)
	for _, t := range o.tel.NamespaceToTelemetries[namespace] {
		if len(t.Spec.GetSelector().GetMatchLabels()) == 0 && len(GetTargetRefs(t.Spec)) == 0 {
			continue
		}
		if matcher.ShouldAttachPolicy(gvk.Telemetry, t.NamespacedName(), t.Spec) {
			out.Workload = append(out.Workload, t.Namespace+"/"+t.Name)
		}
	}
	if n := len(out.Workload); n > 0 && out.Workload[n-1] != oracleNN(ct.Workload.Namespace, ct.Workload.Name) {
		panic(fmt.Sprintf("telemetry oracle loop disagrees with applicableTelemetries: %v vs %v", out.Workload, ct.Workload))
	}
	if tc := o.tel.Tracing(proxy, svc); tc != nil {
		out.Tracing, _ = json.Marshal(tc)
	}
	return out
}

func oracleNN(ns, name string) string {
	if name == "" {
		return ""
	}
	return ns + "/" + name
}

// oraclePodLabels are the labels Istio's deployment controller gives a Gateway's pods
// (pilot/pkg/config/kube/gatewaycommon/deploymentcontroller.go configureIstioGateway and
// extractInfrastructureMetadata; manifests/charts/istio-control/istio-discovery/files/kube-gateway.yaml,
// whose toJsonMap lets later maps win): the template's own, then spec.infrastructure.labels
// (without gateway.networking.k8s.io/ keys) or else the Gateway's own labels
// (PILOT_ENABLE_GATEWAY_API_COPY_LABELS_ANNOTATIONS, on by default), then the gateway name,
// class and managed labels.
func oraclePodLabels(gw map[string]any, name, class string) map[string]string {
	meta, _ := gw["metadata"].(map[string]any)
	spec, _ := gw["spec"].(map[string]any)
	annotations := oracleStrings(meta["annotations"])
	deployment := name + "-" + class
	if v := annotations["gateway.istio.io/name-override"]; v != "" {
		deployment = v
	}
	l := map[string]string{
		"sidecar.istio.io/inject":             "false",
		"service.istio.io/canonical-name":     deployment,
		"service.istio.io/canonical-revision": "latest",
	}
	infra, _ := spec["infrastructure"].(map[string]any)
	if il, ok := infra["labels"].(map[string]any); ok && il != nil {
		for k, v := range oracleStrings(il) {
			if !strings.HasPrefix(k, "gateway.networking.k8s.io/") {
				l[k] = v
			}
		}
	} else {
		maps.Copy(l, oracleStrings(meta["labels"]))
	}
	l["gateway.networking.k8s.io/gateway-name"] = name
	l["gateway.networking.k8s.io/gateway-class-name"] = class
	l["gateway.istio.io/managed"] = "istio.io-gateway-controller"
	return l
}

func oracleStrings(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := map[string]string{}
	for k, x := range m {
		if s, ok := x.(string); ok {
			out[k] = s
		}
	}
	return out
}

// oracleRead decodes the input's documents: Istio kinds through Istio's own conversion
// (crd.ConvertObject) and validation (the schema's ValidateConfig, as istiod's webhook does:
// an invalid object is listed and left out); GatewayClasses, Gateways and Services as they are.
func oracleRead(b []byte) (*oracleInput, error) {
	in := &oracleInput{gatewayClass: map[string]string{}}
	dec := kubeyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 512*1024)
	for {
		var raw map[string]any
		if err := dec.Decode(&raw); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decoding the input: %w", err)
		}
		if len(raw) == 0 {
			continue
		}
		if err := in.add(raw); err != nil {
			return nil, err
		}
	}
	return in, nil
}

func (in *oracleInput) add(raw map[string]any) error {
	js, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	var obj crd.IstioKind
	if err := json.Unmarshal(js, &obj); err != nil {
		return fmt.Errorf("decoding an object: %w", err)
	}
	id := obj.Kind + " " + obj.Namespace + "/" + obj.Name
	switch obj.Kind {
	case "GatewayClass":
		spec, _ := raw["spec"].(map[string]any)
		in.gatewayClass[obj.Name], _ = spec["controllerName"].(string)
		return nil
	case "Gateway":
		if obj.APIVersion == "gateway.networking.k8s.io/v1" || obj.APIVersion == "gateway.networking.k8s.io/v1beta1" {
			in.gateways = append(in.gateways, raw)
			return nil
		}
	case "Service":
		if obj.APIVersion == "v1" {
			in.services = append(in.services, oracleWorkload{Namespace: obj.Namespace, Name: obj.Name})
			return nil
		}
	}
	k := obj.GroupVersionKind()
	s, ok := collections.Pilot.FindByGroupVersionAliasesKind(resource.FromKubernetesGVK(&k))
	if !ok || !oracleKinds[s.GroupVersionKind().Kind] {
		in.ignored = append(in.ignored, id)
		return nil
	}
	cfg, err := crd.ConvertObject(s, &obj, "")
	if err != nil {
		return fmt.Errorf("%s: %w", id, err)
	}
	if _, err := s.ValidateConfig(*cfg); err != nil {
		in.invalid = append(in.invalid, id+": "+err.Error())
		return nil
	}
	in.configs = append(in.configs, *cfg)
	return nil
}

// oracleKinds are the policy kinds the oracle answers for.
var oracleKinds = map[string]bool{
	"AuthorizationPolicy": true, "RequestAuthentication": true, "WasmPlugin": true,
	"TrafficExtension": true, "Telemetry": true, "EnvoyFilter": true,
}

// oracleStore is a ConfigStore holding the input's policies (List is all Istio reads).
type oracleStore struct {
	ConfigStore
	data []config.Config
}

func (s *oracleStore) List(typ config.GroupVersionKind, namespace string) []config.Config {
	var out []config.Config
	for _, c := range s.data {
		if c.GroupVersionKind == typ && (namespace == NamespaceAll || namespace == c.Namespace) {
			out = append(out, c)
		}
	}
	return out
}
