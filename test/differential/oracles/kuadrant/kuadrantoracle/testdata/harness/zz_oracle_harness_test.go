package controllers

// This file is not part of the effectivepolicy module (it sits under testdata/, which the Go tool
// ignores). The Kuadrant oracle copies it into a temporary copy of kuadrant-operator v1.5.2's
// internal/controller package and builds that package's test binary, so that the functions below
// are kuadrant-operator's own: its validators, its effective-policy calculations and its
// Enforced condition. Only the reading of the input and the writing of the answer are ours.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/kuadrant/policy-machinery/controller"
	"github.com/kuadrant/policy-machinery/machinery"
	"github.com/samber/lo"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
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
	Paths     []oraclePath     `json:"paths"`
	Listeners []oracleListener `json:"listeners"`
	Policies  []oraclePolicy   `json:"policies"`
	Ignored   []string         `json:"ignored,omitempty"`
}

// oracleListener is which DNSPolicies and TLSPolicies Kuadrant applies to one listener.
type oracleListener struct {
	Namespace   string   `json:"namespace"`
	Gateway     string   `json:"gateway"`
	Listener    string   `json:"listener"`
	Hostname    string   `json:"hostname,omitempty"`
	DNSPolicies []string `json:"dnsPolicies"`
	DNSSkipped  string   `json:"dnsSkipped,omitempty"`
	TLSPolicies []string `json:"tlsPolicies"`
	TLSSkipped  string   `json:"tlsSkipped,omitempty"`
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
	defaultListenerTLS(in.store)
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
	res.Listeners = listeners(ctx, topology, state)
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

// listeners lists, for every listener, the DNSPolicies and TLSPolicies Kuadrant picks for it: the
// accepted DNSPolicies whose listenersForPolicy has it, and the valid TLSPolicies of
// getTLSPoliciesForListener. DNSSkipped and TLSSkipped say why Kuadrant writes nothing for it all
// the same: EffectiveDNSPoliciesReconciler writes a DNSRecord only for a listener with a hostname,
// EffectiveTLSPoliciesReconciler a Certificate only for one that passes
// validateGatewayListenerBlock.
func listeners(ctx context.Context, topology *machinery.Topology, state *sync.Map) []oracleListener {
	dnsFilter := dnsPolicyTypeFilterFunc()
	dnsAccepted := dnsPolicyAcceptedStatusFunc(state)
	dnsByListener := map[string][]string{}
	for _, p := range lo.FilterMap(topology.Policies().Items(), dnsFilter) {
		if ok, _ := dnsAccepted(p); !ok || p.GetDeletionTimestamp() != nil {
			continue
		}
		for _, l := range listenersForPolicy(ctx, topology, p, dnsFilter) {
			dnsByListener[l.GetLocator()] = append(dnsByListener[l.GetLocator()], p.GetNamespace()+"/"+p.GetName())
		}
	}
	var out []oracleListener
	for _, l := range getListenersFromTopology(topology) {
		ol := oracleListener{Namespace: l.Gateway.GetNamespace(), Gateway: l.Gateway.GetName(), Listener: string(l.Name),
			DNSPolicies: dnsByListener[l.GetLocator()], TLSPolicies: []string{}}
		if l.Hostname != nil {
			ol.Hostname = string(*l.Hostname)
		}
		if ol.Hostname == "" {
			// EffectiveDNSPoliciesReconciler.reconcile skips such a listener: no DNSRecord.
			ol.DNSSkipped = "listener has no hostname assigned"
		}
		// The reconciler asks validateGatewayListenerBlock first and skips the listener when it
		// fails; the policies getTLSPoliciesForListener picks are listed all the same, so that
		// the selection is compared on every listener and the effect where Kuadrant has one.
		if err := validateGatewayListenerBlock(field.NewPath(""), *l.Listener, l.Gateway).ToAggregate(); err != nil {
			ol.TLSSkipped = err.Error()
		}
		for _, p := range getTLSPoliciesForListener(l) {
			tp := p.(*kuadrantv1.TLSPolicy)
			if ok, _ := IsTLSPolicyValid(ctx, state, tp); ok && tp.DeletionTimestamp == nil {
				ol.TLSPolicies = append(ol.TLSPolicies, tp.Namespace+"/"+tp.Name)
			}
		}
		if ol.DNSPolicies == nil {
			ol.DNSPolicies = []string{}
		}
		sort.Strings(ol.DNSPolicies)
		sort.Strings(ol.TLSPolicies)
		out = append(out, ol)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.Namespace+"/"+a.Gateway+"#"+a.Listener < b.Namespace+"/"+b.Gateway+"#"+b.Listener
	})
	return out
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
