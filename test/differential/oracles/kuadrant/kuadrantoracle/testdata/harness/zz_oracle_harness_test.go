package controllers

// This file is not part of the effectivepolicy module (it sits under testdata/, which the Go tool
// ignores). The Kuadrant oracle copies it into a temporary copy of kuadrant-operator v1.5.2's
// internal/controller package and builds that package's test binary, so that the functions below
// are kuadrant-operator's own: its validators, its effective-policy calculations and its
// Enforced condition. Only the reading of the input and the writing of the answer are ours.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/go-logr/logr"
	"github.com/kuadrant/policy-machinery/controller"
	"github.com/kuadrant/policy-machinery/machinery"
	"github.com/samber/lo"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	kuadrantv1 "github.com/kuadrant/kuadrant-operator/api/v1"
	kuadrantv1alpha1 "github.com/kuadrant/kuadrant-operator/api/v1alpha1"
	kuadrantv1beta1 "github.com/kuadrant/kuadrant-operator/api/v1beta1"
	"github.com/kuadrant/kuadrant-operator/internal/kuadrant"
)

// TestMain answers every input file named in KUADRANT_ORACLE_INPUTS (a list separated by the OS
// path-list separator ':'), writing <input>.json next to each, and runs no Go test.
func TestMain(m *testing.M) {
	inputs := os.Getenv("KUADRANT_ORACLE_INPUTS")
	if inputs == "" {
		fmt.Fprintln(os.Stderr, "KUADRANT_ORACLE_INPUTS is empty: nothing to answer")
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
	res, err := answer(b)
	if err != nil {
		return err
	}
	out, err := json.MarshalIndent(res, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(in+".json", out, 0o644)
}

// oracleResult is the JSON the oracle prints (its README documents it).
type oracleResult struct {
	Paths    []oraclePath   `json:"paths"`
	Policies []oraclePolicy `json:"policies"`
	Ignored  []string       `json:"ignored,omitempty"`
}

type oracleNode struct {
	Kind        string `json:"kind"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name"`
	SectionName string `json:"sectionName,omitempty"`
}

type oracleRule struct {
	Source string          `json:"source"`
	Spec   json.RawMessage `json:"spec"`
}

type oraclePath struct {
	ID             string                `json:"id"`
	Kind           string                `json:"kind"`
	Path           []oracleNode          `json:"path"`
	Rules          map[string]oracleRule `json:"rules"`
	SourcePolicies []string              `json:"sourcePolicies"`
	Spec           json.RawMessage       `json:"spec"`
}

type oraclePolicy struct {
	Kind       string             `json:"kind"`
	Namespace  string             `json:"namespace"`
	Name       string             `json:"name"`
	Conditions []metav1.Condition `json:"conditions"`
}

// inputs holds the typed objects of one input.
type inputs struct {
	store   controller.Store
	ignored []string
}

func answer(doc []byte) (*oracleResult, error) {
	in, err := decode(doc)
	if err != nil {
		return nil, err
	}
	ensureKuadrant(in)
	assumeProgrammed(in.store)
	topology, err := buildTopology(in.store)
	if err != nil {
		return nil, fmt.Errorf("topology: %w", err)
	}
	ctx := controller.LoggerIntoContext(context.Background(), logr.Discard())
	state := &sync.Map{}
	if err := validate(ctx, topology, state); err != nil {
		return nil, err
	}
	kobj := GetKuadrantFromTopology(topology, state)
	if kobj == nil {
		return nil, errors.New("no Kuadrant object in the topology")
	}
	res := &oracleResult{Ignored: in.ignored}
	// The same calls, in the same order, as the effective-policies task of
	// NewDataPlanePoliciesWorkflow (data_plane_policies_workflow.go).
	auth := CalculateEffectiveAuthPolicies(ctx, topology, kobj, state)
	state.Store(StateEffectiveAuthPolicies, auth)
	rlp := (&EffectiveRateLimitPolicyReconciler{}).calculateEffectivePolicies(ctx, topology, kobj, state)
	state.Store(StateEffectiveRateLimitPolicies, rlp)
	trlp := (&EffectiveTokenRateLimitPolicyReconciler{}).calculateEffectivePolicies(ctx, topology, kobj, state)
	state.Store(StateEffectiveTokenRateLimitPolicies, trlp)
	for id, e := range auth {
		res.Paths = append(res.Paths, pathOf(id, kuadrantv1.AuthPolicyGroupKind.Kind, e.Path, &e.Spec, e.SourcePolicies))
	}
	for id, e := range rlp {
		res.Paths = append(res.Paths, pathOf(id, kuadrantv1.RateLimitPolicyGroupKind.Kind, e.Path, &e.Spec, e.SourcePolicies))
	}
	for id, e := range trlp {
		res.Paths = append(res.Paths, pathOf(id, kuadrantv1alpha1.TokenRateLimitPolicyGroupKind.Kind, e.Path, &e.Spec, e.SourcePolicies))
	}
	sort.Slice(res.Paths, func(i, j int) bool {
		if res.Paths[i].Kind != res.Paths[j].Kind {
			return res.Paths[i].Kind < res.Paths[j].Kind
		}
		return res.Paths[i].ID < res.Paths[j].ID
	})
	res.Policies = statuses(ctx, topology, state)
	return res, nil
}

// validate runs the validators of the data-plane policies workflow with every dependency installed
// (NewDataPlanePoliciesWorkflow's dataPlanePoliciesValidation), then the DNSPolicy and TLSPolicy
// validators, which store their results in state the same way.
func validate(ctx context.Context, topology *machinery.Topology, state *sync.Map) error {
	validators := []controller.ReconcileFunc{
		(&AuthPolicyValidator{isGatewayAPIInstalled: true, isAuthorinoOperatorInstalled: true, isGatewayProviderInstalled: true}).Validate,
		(&RateLimitPolicyValidator{isGatewayAPIInstalled: true, isLimitadorOperatorInstalled: true, isGatewayProviderInstalled: true}).Validate,
		(&TokenRateLimitPolicyValidator{isGatewayAPIInstalled: true, isLimitadorOperatorInstalled: true, isGatewayProviderInstalled: true}).Validate,
		NewDNSPoliciesValidator(true, true).Subscription().ReconcileFunc,
		NewTLSPoliciesValidator(true, true).Validate,
	}
	for _, v := range validators {
		if err := v(ctx, nil, topology, nil, state); err != nil {
			return err
		}
	}
	return nil
}

// statuses computes each policy's Accepted condition (from the validators' results, as the status
// updaters do) and, for the three data-plane kinds, its Enforced condition with the status
// updaters' own enforcedCondition. No Limitador, Authorino or gateway extension objects exist
// here, so a policy with rules in effect somewhere is Enforced=False with a MissingDependency
// reason; Overridden and the absence of routes are told apart exactly as Kuadrant does.
func statuses(ctx context.Context, topology *machinery.Topology, state *sync.Map) []oraclePolicy {
	logger := controller.LoggerFromContext(ctx)
	rlpAccepted := rateLimitPolicyAcceptedStatusFunc(state)
	authAccepted := authPolicyAcceptedStatusFunc(state)
	trlpAccepted := tokenRateLimitPolicyAcceptedStatusFunc(state)
	dnsAccepted := dnsPolicyAcceptedStatusFunc(state)
	var out []oraclePolicy
	for _, p := range topology.Policies().Items() {
		var conds []metav1.Condition
		add := func(pol kuadrant.Policy, accepted bool, err error, enforced func() *metav1.Condition) {
			meta.SetStatusCondition(&conds, *kuadrant.AcceptedCondition(pol, err))
			if accepted && enforced != nil {
				meta.SetStatusCondition(&conds, *enforced())
			}
		}
		switch pol := p.(type) {
		case *kuadrantv1.RateLimitPolicy:
			ok, err := rlpAccepted(pol)
			add(pol, ok, err, func() *metav1.Condition {
				return (&RateLimitPolicyStatusUpdater{}).enforcedCondition(pol, topology, state, logger)
			})
		case *kuadrantv1.AuthPolicy:
			ok, err := authAccepted(pol)
			add(pol, ok, err, func() *metav1.Condition {
				return (&AuthPolicyStatusUpdater{}).enforcedCondition(pol, topology, state, logger)
			})
		case *kuadrantv1alpha1.TokenRateLimitPolicy:
			ok, err := trlpAccepted(pol)
			add(pol, ok, err, func() *metav1.Condition {
				return (&TokenRateLimitPolicyStatusUpdater{}).enforcedCondition(pol, topology, state)
			})
		case *kuadrantv1.DNSPolicy:
			ok, err := dnsAccepted(pol)
			add(pol, ok, err, nil)
		case *kuadrantv1.TLSPolicy:
			ok, err := IsTLSPolicyValid(ctx, state, pol)
			add(pol, ok, err, nil)
		default:
			continue
		}
		for i := range conds {
			conds[i].LastTransitionTime = metav1.Time{}
		}
		out = append(out, oraclePolicy{Kind: p.GroupVersionKind().Kind, Namespace: p.GetNamespace(), Name: p.GetName(), Conditions: conds})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Kind+"/"+out[i].Namespace+"/"+out[i].Name < out[j].Kind+"/"+out[j].Namespace+"/"+out[j].Name
	})
	return out
}

// mergeable is what the effective specs of the three data-plane kinds have in common
// (api/v1 merge_strategies.go MergeablePolicy).
type mergeable interface {
	Rules() map[string]kuadrantv1.MergeableRule
}

func pathOf(id, kind string, path []machinery.Targetable, spec mergeable, sources []string) oraclePath {
	p := oraclePath{ID: id, Kind: kind, Rules: map[string]oracleRule{}, SourcePolicies: sources}
	for _, t := range path {
		p.Path = append(p.Path, nodeOf(t))
	}
	for name, r := range spec.Rules() {
		b, _ := json.Marshal(r.GetSpec())
		p.Rules[name] = oracleRule{Source: r.GetSource(), Spec: b}
	}
	if b, err := json.Marshal(spec); err == nil {
		var whole struct {
			Spec json.RawMessage `json:"spec"`
		}
		_ = json.Unmarshal(b, &whole)
		p.Spec = whole.Spec
	}
	return p
}

func nodeOf(t machinery.Targetable) oracleNode {
	n := oracleNode{Kind: t.GroupVersionKind().Kind, Namespace: t.GetNamespace(), Name: t.GetName()}
	switch o := t.(type) {
	case *machinery.Listener:
		n.Kind, n.Name, n.SectionName = "Listener", o.Gateway.GetName(), string(o.Name)
	case *machinery.HTTPRouteRule:
		n.Kind, n.Name, n.SectionName = "HTTPRouteRule", o.HTTPRoute.GetName(), string(o.Name)
	case *machinery.GRPCRouteRule:
		n.Kind, n.Name, n.SectionName = "GRPCRouteRule", o.GRPCRoute.GetName(), string(o.Name)
	}
	return n
}

// buildTopology builds the topology as policy-machinery's controller does for kuadrant-operator
// (policy-machinery v0.8.0 controller/topology_builder.go gatewayAPITopologyBuilder.Build, with the
// policy kinds, object kinds and links NewPolicyMachineryController configures in
// state_of_the_world.go). Services are not watched by kuadrant-operator, so none are given.
func buildTopology(store controller.Store) (*machinery.Topology, error) {
	by := func(gk schema.GroupKind) []controller.Object { return store.FilterByGroupKind(gk) }
	opts := []machinery.GatewayAPITopologyOptionsFunc{
		machinery.WithGatewayClasses(lo.Map(by(machinery.GatewayClassGroupKind), controller.ObjectAs[*gwapiv1.GatewayClass])...),
		machinery.WithGateways(lo.Map(by(machinery.GatewayGroupKind), controller.ObjectAs[*gwapiv1.Gateway])...),
		machinery.WithHTTPRoutes(lo.Map(by(machinery.HTTPRouteGroupKind), controller.ObjectAs[*gwapiv1.HTTPRoute])...),
		machinery.WithGRPCRoutes(lo.Map(by(machinery.GRPCRouteGroupKind), controller.ObjectAs[*gwapiv1.GRPCRoute])...),
		machinery.ExpandGatewayListeners(),
		machinery.ExpandHTTPRouteRules(),
		machinery.ExpandGRPCRouteRules(),
		machinery.ExpandServicePorts(),
		machinery.WithGatewayAPITopologyLinks(kuadrantv1beta1.LinkKuadrantToGatewayClasses(store)),
	}
	for _, gk := range []schema.GroupKind{
		kuadrantv1.DNSPolicyGroupKind,
		kuadrantv1.TLSPolicyGroupKind,
		kuadrantv1.AuthPolicyGroupKind,
		kuadrantv1.RateLimitPolicyGroupKind,
		kuadrantv1alpha1.TokenRateLimitPolicyGroupKind,
	} {
		opts = append(opts, machinery.WithGatewayAPITopologyPolicies(lo.Map(by(gk), controller.ObjectAs[machinery.Policy])...))
	}
	opts = append(opts, machinery.WithGatewayAPITopologyObjects(lo.Map(by(kuadrantv1beta1.KuadrantGroupKind), controller.ObjectAs[machinery.Object])...))
	// cert-manager's Issuers and ClusterIssuers, linked to the TLSPolicies that name them, as
	// certManagerControllerOpts configures them: the TLSPolicy validator looks for them.
	for _, gk := range []schema.GroupKind{CertManagerIssuerKind, CertManagerClusterIssuerKind} {
		opts = append(opts, machinery.WithGatewayAPITopologyObjects(lo.Map(by(gk), func(o controller.Object, _ int) machinery.Object {
			return &controller.RuntimeObject{Object: o}
		})...))
	}
	opts = append(opts, machinery.WithGatewayAPITopologyLinks(LinkTLSPolicyToIssuerFunc(store), LinkTLSPolicyToClusterIssuerFunc(store)))
	return machinery.NewGatewayAPITopology(opts...)
}

// decode reads a multi-document YAML (or JSON) stream into typed objects. Kinds kuadrant-operator
// v1.5.2 does not watch or that play no part here (Namespaces, Services, ListenerSets, TCPRoutes,
// Secrets, ...) are listed as ignored.
func decode(doc []byte) (*inputs, error) {
	in := &inputs{store: controller.Store{}}
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(doc), 4096)
	for i := 0; ; i++ {
		var raw map[string]any
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if raw == nil {
			continue
		}
		if err := add(in, raw); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
	}
	return in, nil
}

func add(in *inputs, raw map[string]any) error {
	apiVersion, _ := raw["apiVersion"].(string)
	kind, _ := raw["kind"].(string)
	group := strings.Split(apiVersion, "/")[0]
	if !strings.Contains(apiVersion, "/") {
		group = ""
	}
	obj, gv := newObject(group, kind)
	md, _ := raw["metadata"].(map[string]any)
	if obj == nil {
		in.ignored = append(in.ignored, fmt.Sprintf("%s %v/%v", kind, md["namespace"], md["name"]))
		return nil
	}
	raw["apiVersion"] = gv
	b, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, obj); err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	if obj.GetName() == "" {
		return fmt.Errorf("%s without metadata.name", kind)
	}
	if obj.GetUID() == "" {
		obj.SetUID(types.UID(group + "/" + kind + "/" + obj.GetNamespace() + "/" + obj.GetName()))
	}
	in.store[string(obj.GetUID())] = obj
	return nil
}

// newObject returns an empty typed object of a kind kuadrant-operator v1.5.2 watches, and the
// group/version it is stored at (gateway-api v1.2.1 serves all four Gateway API kinds at v1).
func newObject(group, kind string) (controller.Object, string) {
	switch group + "/" + kind {
	case "gateway.networking.k8s.io/GatewayClass":
		return &gwapiv1.GatewayClass{}, gwapiv1.GroupVersion.String()
	case "gateway.networking.k8s.io/Gateway":
		return &gwapiv1.Gateway{}, gwapiv1.GroupVersion.String()
	case "gateway.networking.k8s.io/HTTPRoute":
		return &gwapiv1.HTTPRoute{}, gwapiv1.GroupVersion.String()
	case "gateway.networking.k8s.io/GRPCRoute":
		return &gwapiv1.GRPCRoute{}, gwapiv1.GroupVersion.String()
	case "kuadrant.io/RateLimitPolicy":
		return &kuadrantv1.RateLimitPolicy{}, kuadrantv1.GroupVersion.String()
	case "kuadrant.io/AuthPolicy":
		return &kuadrantv1.AuthPolicy{}, kuadrantv1.GroupVersion.String()
	case "kuadrant.io/DNSPolicy":
		return &kuadrantv1.DNSPolicy{}, kuadrantv1.GroupVersion.String()
	case "kuadrant.io/TLSPolicy":
		return &kuadrantv1.TLSPolicy{}, kuadrantv1.GroupVersion.String()
	case "kuadrant.io/TokenRateLimitPolicy":
		return &kuadrantv1alpha1.TokenRateLimitPolicy{}, kuadrantv1alpha1.GroupVersion.String()
	case "kuadrant.io/Kuadrant":
		return &kuadrantv1beta1.Kuadrant{}, kuadrantv1beta1.GroupVersion.String()
	case "cert-manager.io/Issuer":
		return &certmanagerv1.Issuer{}, certmanagerv1.SchemeGroupVersion.String()
	case "cert-manager.io/ClusterIssuer":
		return &certmanagerv1.ClusterIssuer{}, certmanagerv1.SchemeGroupVersion.String()
	}
	return nil, ""
}

// ensureKuadrant adds the Kuadrant object kuadrant-operator needs before it computes anything (it
// links every GatewayClass to it), unless the input has one.
func ensureKuadrant(in *inputs) {
	if len(in.store.FilterByGroupKind(kuadrantv1beta1.KuadrantGroupKind)) > 0 {
		return
	}
	k := &kuadrantv1beta1.Kuadrant{
		TypeMeta:   metav1.TypeMeta{APIVersion: kuadrantv1beta1.GroupVersion.String(), Kind: "Kuadrant"},
		ObjectMeta: metav1.ObjectMeta{Name: "kuadrant", Namespace: "kuadrant-system", UID: "oracle-kuadrant"},
	}
	in.store[string(k.UID)] = k
}

// assumeProgrammed gives every listener without a status a Programmed listener status, and every
// route parentRef without a status an Accepted parent status from its Gateway's controller, as a
// gateway provider that accepts everything would. Kuadrant's effective policies do not read them;
// its Enforced condition skips paths through listeners and routes that are not ready.
func assumeProgrammed(store controller.Store) {
	classes := map[string]gwapiv1.GatewayController{}
	for _, o := range store.FilterByGroupKind(machinery.GatewayClassGroupKind) {
		c := o.(*gwapiv1.GatewayClass)
		classes[c.Name] = c.Spec.ControllerName
	}
	gateways := map[string]gwapiv1.GatewayController{}
	ready := []metav1.Condition{{Type: "Programmed", Status: metav1.ConditionTrue, Reason: "Programmed"}, {Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted"}}
	for _, o := range store.FilterByGroupKind(machinery.GatewayGroupKind) {
		g := o.(*gwapiv1.Gateway)
		gateways[g.Namespace+"/"+g.Name] = classes[string(g.Spec.GatewayClassName)]
		for _, l := range g.Spec.Listeners {
			if !lo.ContainsBy(g.Status.Listeners, func(s gwapiv1.ListenerStatus) bool { return s.Name == l.Name }) {
				g.Status.Listeners = append(g.Status.Listeners, gwapiv1.ListenerStatus{Name: l.Name, Conditions: ready})
			}
		}
	}
	accept := func(ns string, spec *gwapiv1.CommonRouteSpec, status *gwapiv1.RouteStatus) {
		for _, ref := range spec.ParentRefs {
			key := string(ptr.Deref(ref.Namespace, gwapiv1.Namespace(ns))) + "/" + string(ref.Name)
			ctrl, ok := gateways[key]
			if !ok || lo.ContainsBy(status.Parents, func(s gwapiv1.RouteParentStatus) bool { return reflect.DeepEqual(s.ParentRef, ref) }) {
				continue
			}
			status.Parents = append(status.Parents, gwapiv1.RouteParentStatus{ParentRef: ref, ControllerName: ctrl, Conditions: ready[1:]})
		}
	}
	for _, o := range store.FilterByGroupKind(machinery.HTTPRouteGroupKind) {
		r := o.(*gwapiv1.HTTPRoute)
		accept(r.Namespace, &r.Spec.CommonRouteSpec, &r.Status.RouteStatus)
	}
	for _, o := range store.FilterByGroupKind(machinery.GRPCRouteGroupKind) {
		r := o.(*gwapiv1.GRPCRoute)
		accept(r.Namespace, &r.Spec.CommonRouteSpec, &r.Status.RouteStatus)
	}
}
