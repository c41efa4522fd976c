package anchors

import (
	"context"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kuadrant/policy-machinery/machinery"
	"github.com/samber/lo"
	k8stypes "k8s.io/apimachinery/pkg/types"
)

// BuildTopology builds policy-machinery's Gateway API topology of the
// inputs, every section expanded (listeners, route rules, Service ports),
// as kuadrant-operator's topology builder does.
//
// A mesh route's parentRef names a Service; policy-machinery links routes
// to Gateways and listeners only, so a mesh route and its rules hang from
// no parent (their rules still link to the Services they send to).
func BuildTopology(in *Inputs) (*machinery.Topology, error) {
	policies := make([]machinery.Policy, len(in.Policies))
	for i, p := range in.Policies {
		policies[i] = p
	}
	return machinery.NewGatewayAPITopology(
		machinery.WithGatewayClasses(in.GatewayClasses...),
		machinery.WithGateways(in.Gateways...),
		machinery.WithHTTPRoutes(in.HTTPRoutes...),
		machinery.WithServices(in.Services...),
		machinery.WithGatewayAPITopologyPolicies(policies...),
		machinery.ExpandGatewayListeners(),
		machinery.ExpandHTTPRouteRules(),
		machinery.ExpandServicePorts(),
	)
}

// PathEffective is the effective policy of one kind on one path from a
// GatewayClass to a route rule, as kuadrant-operator's reconcilers keep it
// (EffectiveRateLimitPolicy: Path, Spec).
type PathEffective struct {
	Path   []machinery.Targetable
	Policy *Policy
}

// Effective maps a policy kind to its effective policies by path ID.
type Effective map[string]map[string]PathEffective

// Progress counts the (kind, GatewayClass, route rule) triples done, for a
// run cut short.
type Progress struct {
	Done, Total atomic.Int64
	Paths       atomic.Int64 // paths found, policies or not
}

// ComputeEffective computes every effective policy of every kind the way
// kuadrant-operator does (internal/controller/effective_ratelimit_policies_reconciler.go,
// calculateEffectivePolicies): for every GatewayClass and every
// HTTPRouteRule targetable, Targetables().Paths(class, rule), and for each
// path the policies of the kind along it folded into one
// (effectivePolicyForPath). Its reconcilers (auth, rate limit, token rate
// limit) run as concurrent tasks of one controller.Workflow
// (internal/controller/data_plane_policies_workflow.go), so the kinds run
// on a goroutine each. When ctx ends, it returns what it has with
// ctx.Err().
func ComputeEffective(ctx context.Context, topology *machinery.Topology, kinds []string, prog *Progress) (Effective, error) {
	targetables := topology.Targetables()
	// kuadrant-operator takes the GatewayClasses linked to its Kuadrant
	// object (targetables.Children(kuadrant)); here there is no Kuadrant
	// object, and every GatewayClass is taken.
	classes := targetables.Items(func(o machinery.Object) bool {
		_, ok := o.(*machinery.GatewayClass)
		return ok
	})
	rules := targetables.Items(func(o machinery.Object) bool {
		_, ok := o.(*machinery.HTTPRouteRule)
		return ok
	})
	prog.Total.Store(int64(len(kinds) * len(classes) * len(rules)))
	out := make(Effective, len(kinds))
	results := make([]map[string]PathEffective, len(kinds))
	errs := make([]error, len(kinds))
	var wg sync.WaitGroup
	for i, kind := range kinds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = computeKind(ctx, targetables, classes, rules, kind, prog)
		}()
	}
	wg.Wait()
	for i, kind := range kinds {
		out[kind] = results[i]
	}
	for _, err := range errs {
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// targetableSet is what Topology.Targetables() returns (an unexported
// generic collection type).
type targetableSet interface {
	Paths(from, to machinery.Object) [][]machinery.Targetable
}

func computeKind(ctx context.Context, targetables targetableSet, classes, rules []machinery.Targetable, kind string, prog *Progress) (map[string]PathEffective, error) {
	effective := map[string]PathEffective{}
	isKind := func(p machinery.Policy) bool {
		po, ok := p.(*Policy)
		return ok && po.Kind == kind && po.DeletionTimestamp == nil
	}
	for _, class := range classes {
		for _, rule := range rules {
			if err := ctx.Err(); err != nil {
				return effective, err
			}
			paths := targetables.Paths(class, rule)
			prog.Paths.Add(int64(len(paths)))
			for _, path := range paths {
				if p := effectivePolicyForPath(path, isKind); p != nil {
					effective[PathID(path)] = PathEffective{Path: path, Policy: p}
				}
			}
			prog.Done.Add(1)
		}
	}
	return effective, nil
}

// effectivePolicyForPath folds the policies along a path, the most
// specific first, each less specific one merged in with its own strategy
// (kuadrant-operator api/v1/merge_strategies.go, EffectivePolicyForPath).
func effectivePolicyForPath(path []machinery.Targetable, predicate func(machinery.Policy) bool) *Policy {
	policies := policiesInPath(path, predicate)
	if len(policies) == 0 {
		return nil
	}
	effective := lo.ReduceRight(policies, func(effective machinery.Policy, policy machinery.Policy, _ int) machinery.Policy {
		return effective.Merge(policy)
	}, policies[len(policies)-1])
	p, _ := effective.(*Policy)
	return p
}

// policiesInPath lists the policies attached along a path, least specific
// first, and at one targetable oldest first, then by namespace/name
// (kuadrant-operator api/v1/merge_strategies.go, PoliciesInPath, which
// sorts with policy-machinery's controller.ObjectsByCreationTimestamp; that
// package is not imported here, the order is the same).
func policiesInPath(path []machinery.Targetable, predicate func(machinery.Policy) bool) []machinery.Policy {
	return lo.FlatMap(path, func(t machinery.Targetable, _ int) []machinery.Policy {
		ps := lo.Filter(t.Policies(), func(p machinery.Policy, _ int) bool { return predicate(p) })
		sort.SliceStable(ps, func(i, j int) bool { return byCreation(ps[i].(*Policy), ps[j].(*Policy)) })
		return ps
	})
}

func byCreation(a, b *Policy) bool {
	ta, tb := a.CreationTimestamp, b.CreationTimestamp
	if !ta.Equal(&tb) {
		return ta.Before(&tb)
	}
	return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
}

// PathID names a path as kuadrant-operator does (api/v1/merge_strategies.go,
// PathID): the targetables' namespace/name joined by "|".
func PathID(path []machinery.Targetable) string {
	return strings.Join(lo.Map(path, func(t machinery.Targetable, _ int) string {
		return strings.TrimPrefix(k8stypes.NamespacedName{Namespace: t.GetNamespace(), Name: t.GetName()}.String(), string(k8stypes.Separator))
	}), "|")
}
