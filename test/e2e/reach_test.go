//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	v1alpha1 "github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	epclient "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned/typed/effectivepolicy/v1alpha1"
)

const (
	reachInfra  = "e2e-reach-infra"
	reachApp    = "e2e-reach-app"
	reachPolicy = "retry-all"
	reachAdmin  = "e2e-reach-policy-admin" // the shipped reader role in reachInfra only
)

// reachTargets lists a PolicyReach's reached targets as Kind/namespace/name.
func reachTargets(p v1alpha1.ReachPolicy) []string {
	var out []string
	for _, r := range p.Reaches {
		out = append(out, r.Target.Kind+"/"+r.Target.Namespace+"/"+r.Target.Name)
	}
	return out
}

// TestPolicyReach: the policy admin's question (docs/spec.md §8) through the real kube-apiserver: a
// Gateway policy in infra reaches the Gateway and a route in an application namespace; an
// admin of infra alone sees the counts and only infra's targets; kubectl prints the columns
// (the kind's semantics Assumed: ColorPolicy is found by label);
// a new route under the Gateway and the policy's deletion are watch events on its PolicyReach.
func TestPolicyReach(t *testing.T) {
	setUpPolicyReach(t)

	ctx := context.Background()
	cs := clientset(t, "").EffectivepolicyV1alpha1()
	pr := waitPolicyReach(ctx, t, cs)
	checkReachAsEffectivePolicies(ctx, t, cs, pr)

	// The policy admin of infra: counts, and names only in infra.
	checkPolicyAdminReach(t)

	// Paging: every PolicyReach, one per page, is the unpaged list.
	checkPolicyReachPaging(ctx, t, cs)

	// WatchList: the initial ADDED event, then the bookmark that ends them.
	checkPolicyReachWatchList(ctx, t, cs)

	// Watch: a route under the Gateway, then the policy's deletion.
	checkPolicyReachWatch(ctx, t, cs, pr.ResourceVersion)
}

// setUpPolicyReach: Gateway gw of reachInfra, HTTPRoute app of reachApp
// under it, and ColorPolicy reachPolicy on gw (and on a Gateway not yet
// there); reachAdmin may read in reachInfra only.
func setUpPolicyReach(t *testing.T) {
	t.Helper()
	applyColorPolicyCRDs(t)
	createNamespace(t, reachInfra)
	createNamespace(t, reachApp)
	kubectlApply(t, fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: %[1]s}
spec:
  gatewayClassName: e2e-reach
  listeners:
  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, namespace: %[2]s}
spec:
  parentRefs: [{name: gw, namespace: %[1]s}]
---
apiVersion: colors.example.com/v1
kind: ColorPolicy
metadata: {name: %[3]s, namespace: %[1]s, labels: {team: platform}}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: Gateway, name: gw}
  - {group: gateway.networking.k8s.io, kind: Gateway, name: not-yet}
  color: amber
`, reachInfra, reachApp, reachPolicy))
	kubectl(t, "create", "rolebinding", "policy-admin", "--clusterrole=effectivepolicy.dev:view-effectivepolicies", "--user="+reachAdmin, "-n", reachInfra)
	eventually(t, 30*time.Second, "binding of "+reachAdmin, func() error {
		_, _, err := kubectlRaw(nil, "auth", "can-i", "get", "policyreaches.effectivepolicy.dev", "--as", reachAdmin, "-n", reachInfra)
		return err
	})

}

// waitPolicyReach waits for the PolicyReach of reachPolicy to reach gw and
// the route, and returns it.
func waitPolicyReach(ctx context.Context, t *testing.T, cs epclient.EffectivepolicyV1alpha1Interface) *v1alpha1.PolicyReach {
	t.Helper()
	var pr *v1alpha1.PolicyReach
	want := []string{"Gateway/" + reachInfra + "/gw", "HTTPRoute/" + reachApp + "/app"}
	eventually(t, 60*time.Second, "the PolicyReach of "+reachPolicy, func() error {
		var err error
		if pr, err = cs.PolicyReaches(reachInfra).Get(ctx, reachPolicy, metav1.GetOptions{}); err != nil {
			return err
		}
		if len(pr.Policies) != 1 || strings.Join(reachTargets(pr.Policies[0]), " ") != strings.Join(want, " ") {
			return fmt.Errorf("reaches %+v, want %v", pr.Policies, want)
		}
		return nil
	})
	return pr
}

// checkReachAsEffectivePolicies: the PolicyReach's summary, labels and
// attachments, and its verdicts those of the targets' EffectivePolicies.
func checkReachAsEffectivePolicies(ctx context.Context, t *testing.T, cs epclient.EffectivepolicyV1alpha1Interface, pr *v1alpha1.PolicyReach) {
	t.Helper()
	p := pr.Policies[0]
	if p.Kind != "ColorPolicy" || p.Summary != (v1alpha1.ReachSummary{Targets: 2, Enforced: 2}) || p.HiddenTargets != 0 || pr.Labels["team"] != "platform" {
		t.Errorf("admin's view: %+v labels %v", p, pr.Labels)
	}
	if len(p.AttachedTo) != 2 || !p.AttachedTo[0].Resolved || p.AttachedTo[1].Reason != v1alpha1.ReasonTargetNotFound {
		t.Errorf("attachedTo %+v", p.AttachedTo)
	}
	// The verdicts are those of the targets' EffectivePolicies.
	ep, err := cs.EffectivePolicies(reachApp).Get(ctx, "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := ep.Targets[0].Policies[0].Sources[0]; s.Name != reachPolicy || s.Outcome != p.Reaches[1].Outcome || s.Message != p.Reaches[1].Message {
		t.Errorf("route's source %+v, reach %+v", s, p.Reaches[1])
	}
	checkAssumedSemantics(t, ep, p)
}

// checkAssumedSemantics: ColorPolicy is a kind found by its CRD's label alone, so the API
// (the route's EffectivePolicy, the PolicyReach) and kubectl get's tables say its semantics
// were assumed (docs/spec.md §4.1, "Saying when we guess").
func checkAssumedSemantics(t *testing.T, ep *v1alpha1.EffectivePolicy, p v1alpha1.ReachPolicy) {
	t.Helper()
	if got := ep.Targets[0].Policies[0].Semantics; got != v1alpha1.SemanticsAssumed {
		t.Errorf("the route's ColorPolicy entry: semantics %q, want %s", got, v1alpha1.SemanticsAssumed)
	}
	if p.Semantics != v1alpha1.SemanticsAssumed {
		t.Errorf("the PolicyReach's ColorPolicy: semantics %q, want %s", p.Semantics, v1alpha1.SemanticsAssumed)
	}
	out := kubectl(t, "get", "effectivepolicy", "app", "-n", reachApp)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAME TARGETS POLICIES KINDS ASSUMED AGE" ||
		!strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), "app HTTPRoute 1 ColorPolicy ColorPolicy ") {
		t.Errorf("kubectl get effectivepolicy:\n%s", out)
	}
}

func checkPolicyAdminReach(t *testing.T) {
	t.Helper()
	a := asUser(t, reachAdmin, nil, apiPrefix+"/namespaces/"+reachInfra+"/policyreaches/"+reachPolicy)
	if a.code != 200 || strings.Contains(a.body, reachApp) || !strings.Contains(a.body, `"hiddenTargets":1`) ||
		!strings.Contains(a.body, `"targets":2`) || !strings.Contains(a.body, `"name":"gw"`) {
		t.Errorf("policy admin's view: %d %s", a.code, a.body)
	}
	// ... and the same in a list and a table.
	a = asUser(t, reachAdmin, nil, apiPrefix+"/namespaces/"+reachInfra+"/policyreaches")
	if a.code != 200 || strings.Contains(a.body, reachApp) || !strings.Contains(a.body, `"hiddenTargets":1`) {
		t.Errorf("policy admin's list: %d %s", a.code, a.body)
	}
	if a := asUser(t, reachAdmin, nil, apiPrefix+"/namespaces/"+reachApp+"/policyreaches"); a.code != 403 {
		t.Errorf("policy admin lists policyreaches of %s: %d", reachApp, a.code)
	}

	out := kubectl(t, "get", "policyreach", reachPolicy, "-n", reachInfra)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAME KINDS ASSUMED TARGETS ENFORCED PARTIAL OVERRIDDEN CONFLICTED INVALID AGE" ||
		!strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), reachPolicy+" ColorPolicy ColorPolicy 2 2 0 0 0 0 ") {
		t.Errorf("kubectl get policyreach:\n%s", out)
	}
	if out := kubectl(t, "get", "policyreaches", "-A", "-l", "team=platform", "-o", "name"); strings.TrimSpace(out) != "policyreach.effectivepolicy.dev/"+reachPolicy {
		t.Errorf("label selector: %q", out)
	}

}

func checkPolicyReachPaging(ctx context.Context, t *testing.T, cs epclient.EffectivepolicyV1alpha1Interface) {
	t.Helper()
	all, err := cs.PolicyReaches("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var paged []string
	for opts := (metav1.ListOptions{Limit: 1}); ; {
		page, err := cs.PolicyReaches("").List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			paged = append(paged, it.Namespace+"/"+it.Name)
		}
		if opts.Continue = page.Continue; opts.Continue == "" {
			break
		}
	}
	if len(paged) != len(all.Items) || len(paged) == 0 {
		t.Errorf("paged list of %d items, unpaged %d", len(paged), len(all.Items))
	}

}

func checkPolicyReachWatchList(ctx context.Context, t *testing.T, cs epclient.EffectivepolicyV1alpha1Interface) {
	t.Helper()
	yes := true
	wl, err := cs.PolicyReaches(reachInfra).Watch(ctx, metav1.ListOptions{SendInitialEvents: &yes, AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, FieldSelector: "metadata.name=" + reachPolicy})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []watch.EventType{watch.Added, watch.Bookmark} {
		select {
		case e := <-wl.ResultChan():
			if e.Type != want {
				t.Fatalf("WatchList event %d: %s, want %s", i, e.Type, want)
			}
			if m, err := metaOf(e.Object); err != nil || want == watch.Bookmark && m.GetAnnotations()["k8s.io/initial-events-end"] != "true" {
				t.Errorf("WatchList bookmark %+v (%v)", e.Object, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("WatchList: no event %d", i)
		}
	}
	wl.Stop()

}

// checkPolicyReachWatch watches the PolicyReach from resourceVersion rv: a
// second route under the Gateway is added to it, and the policy's deletion
// deletes it.
func checkPolicyReachWatch(ctx context.Context, t *testing.T, cs epclient.EffectivepolicyV1alpha1Interface, rv string) {
	t.Helper()
	w, err := cs.PolicyReaches(reachInfra).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, FieldSelector: "metadata.name=" + reachPolicy})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	next := func(what string) *v1alpha1.PolicyReach {
		t.Helper()
		select {
		case e := <-w.ResultChan():
			got, ok := e.Object.(*v1alpha1.PolicyReach)
			if !ok {
				t.Fatalf("%s: event %s %T", what, e.Type, e.Object)
			}
			if (what == "deleted") != (e.Type == watch.Deleted) {
				t.Fatalf("%s: event %s", what, e.Type)
			}
			return got
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: no watch event", what)
			return nil
		}
	}
	kubectlApply(t, fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: second, namespace: %[2]s}
spec:
  parentRefs: [{name: gw, namespace: %[1]s}]
`, reachInfra, reachApp))
	if got := reachTargets(next("route added").Policies[0]); len(got) != 3 || got[2] != "HTTPRoute/"+reachApp+"/second" {
		t.Errorf("after a route under the Gateway: %v", got)
	}
	kubectl(t, "delete", "colorpolicies.colors.example.com", reachPolicy, "-n", reachInfra)
	next("deleted")
}
