//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The policy kinds of the alert test, in a group of their own so that what other tests leave in
// the cluster does not count: one kind per alert, and one whose policies are all Enforced.
const (
	alertGroup     = "alerts.e2e.example.com"
	alertNS        = "e2e-alerts"
	conflictedKind = "ExclusivePolicy" // Direct: a second policy on the same Service is Conflicted
	invalidKind    = "BrokenPolicy"    // inherited: a scalar defaults is Invalid
	strayKind      = "StrayPolicy"     // inherited: a missing Service reaches nothing
	healthyKind    = "HealthyPolicy"   // inherited: Enforced
)

var alertCRDs = fmt.Sprintf(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: exclusivepolicies.%[1]s, labels: {gateway.networking.k8s.io/policy: Direct}}
spec:
  group: %[1]s
  scope: Namespaced
  names: {kind: ExclusivePolicy, listKind: ExclusivePolicyList, plural: exclusivepolicies, singular: exclusivepolicy}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: brokenpolicies.%[1]s, labels: {gateway.networking.k8s.io/policy: inherited}}
spec:
  group: %[1]s
  scope: Namespaced
  names: {kind: BrokenPolicy, listKind: BrokenPolicyList, plural: brokenpolicies, singular: brokenpolicy}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: straypolicies.%[1]s, labels: {gateway.networking.k8s.io/policy: inherited}}
spec:
  group: %[1]s
  scope: Namespaced
  names: {kind: StrayPolicy, listKind: StrayPolicyList, plural: straypolicies, singular: straypolicy}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: healthypolicies.%[1]s, labels: {gateway.networking.k8s.io/policy: inherited}}
spec:
  group: %[1]s
  scope: Namespaced
  names: {kind: HealthyPolicy, listKind: HealthyPolicyList, plural: healthypolicies, singular: healthypolicy}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
`, alertGroup)

// alertPolicies returns the test's policies: broken (one Conflicted, one Invalid, one reaching
// nothing, one Enforced) or fixed (every one Enforced).
func alertPolicies(broken bool) string {
	defaults, stray := `{color: red}`, "b1"
	if broken {
		defaults, stray = "5", "gone"
	}
	return fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: b1, namespace: %[1]s}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: %[2]s/v1
kind: ExclusivePolicy
metadata: {name: a-first, namespace: %[1]s}
spec: {targetRefs: [{group: "", kind: Service, name: b1}], color: red}
---
apiVersion: %[2]s/v1
kind: BrokenPolicy
metadata: {name: broken, namespace: %[1]s}
spec: {targetRefs: [{group: "", kind: Service, name: b1}], defaults: %[3]s}
---
apiVersion: %[2]s/v1
kind: StrayPolicy
metadata: {name: stray, namespace: %[1]s}
spec: {targetRefs: [{group: "", kind: Service, name: %[4]s}], color: red}
---
apiVersion: %[2]s/v1
kind: HealthyPolicy
metadata: {name: healthy, namespace: %[1]s}
spec: {targetRefs: [{group: "", kind: Service, name: b1}], color: red}
`, alertNS, alertGroup, defaults, stray)
}

// The second ExclusivePolicy on b1: Conflicted (a-first is established first).
var conflictingPolicy = fmt.Sprintf(`
apiVersion: %s/v1
kind: ExclusivePolicy
metadata: {name: b-second, namespace: %s}
spec: {targetRefs: [{group: "", kind: Service, name: b1}], color: blue}
`, alertGroup, alertNS)

// TestAlerts: each alert of the chart's PrometheusRule (the same as the kustomize component's),
// evaluated by Prometheus's engine on the real /metrics of our server and kube-apiserver, fires
// where it should and not where it should not:
//   - the policy alerts fire for exactly the kinds with a Conflicted source, an Invalid source, a
//     policy reaching nothing, and for none of them (nor the all-Enforced kind) once fixed;
//   - EffectivePolicyCacheNotPersisted fires for a replica running without a cache, not for the
//     server with one;
//   - EffectivePolicyServerNotReady fires once no server answers behind the APIService, not while
//     one does.
//
// The expressions are evaluated at one instant: "for" is the rule's business.
func TestAlerts(t *testing.T) {
	rule, dashboard := monitoringObjects(t)
	rules := writeRuleFile(t, rule)
	bin := buildAlertEval(t)

	kubectlApply(t, alertCRDs)
	t.Cleanup(func() { _, _, _ = kubectlRaw([]byte(alertCRDs), "delete", "-f", "-", "--ignore-not-found") })
	eventually(t, 60*time.Second, "the alert test's CRDs established", func() error {
		_, _, err := kubectlRaw(nil, "wait", "--for=condition=Established", "--timeout=5s",
			"crd/exclusivepolicies."+alertGroup, "crd/brokenpolicies."+alertGroup, "crd/straypolicies."+alertGroup, "crd/healthypolicies."+alertGroup)
		return err
	})
	createNamespace(t, alertNS)
	server, kube := localPort(t, "SERVER_PORT"), localPort(t, "KUBE_PORT")
	evalNow := func(extra ...scrape) (firing, error) {
		var scrapes []scrape
		for _, p := range []struct{ job, port string }{{"effectivepolicy", server}, {"kube-apiserver", kube}} {
			s, err := scrapePort(t, p.job, p.port)
			if err != nil {
				return nil, err
			}
			scrapes = append(scrapes, s)
		}
		return evalAlerts(t, bin, rules, append(scrapes, extra...)...)
	}

	mine := map[string]string{"group": alertGroup}
	policyAlerts := func(want map[string][]string) func() error {
		return func() error {
			f, err := evalNow()
			if err != nil {
				return err
			}
			got := map[string][]string{}
			for alert := range want {
				got[alert] = f.values(alert, "kind", mine)
			}
			if !reflect.DeepEqual(got, want) {
				return fmt.Errorf("firing for kinds of %s: got %v, want %v", alertGroup, got, want)
			}
			for _, a := range []string{"EffectivePolicyServerNotReady", "EffectivePolicyCacheNotPersisted"} {
				if len(f[a]) > 0 {
					return fmt.Errorf("%s fires on a healthy server: %v", a, f[a])
				}
			}
			return nil
		}
	}

	kubectlApply(t, alertPolicies(true))
	kubectlApply(t, conflictingPolicy) // after a-first: established second
	eventually(t, 90*time.Second, "the policy alerts fire for the broken kinds", policyAlerts(map[string][]string{
		"EffectivePolicyConflicted":     {conflictedKind},
		"EffectivePolicyInvalid":        {invalidKind},
		"EffectivePolicyReachesNothing": {strayKind},
	}))
	checkDashboardMetrics(t, dashboard, server)

	kubectlApply(t, alertPolicies(false))
	kubectl(t, "delete", "exclusivepolicies."+alertGroup, "b-second", "-n", alertNS)
	eventually(t, 90*time.Second, "no policy alert once fixed", policyAlerts(map[string][]string{
		"EffectivePolicyConflicted":     {},
		"EffectivePolicyInvalid":        {},
		"EffectivePolicyReachesNothing": {},
	}))

	testAlertCacheNotPersisted(t, evalNow)
	testAlertServerNotReady(t, bin, rules, kube)
}

// checkDashboardMetrics: every effectivepolicy_* metric the dashboard queries is on /metrics
// (with a watch open: effectivepolicy_watchers has series only while one is).
func checkDashboardMetrics(t *testing.T, dashboard *unstructured.Unstructured, port string) {
	t.Helper()
	w, err := clientset(t, "").EffectivepolicyV1alpha1().EffectivePolicies(alertNS).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	metricNames := dashboardMetrics(t, dashboard)
	eventually(t, 30*time.Second, "the dashboard's metrics on /metrics", func() error {
		s, err := scrapePort(t, "effectivepolicy", port)
		if err != nil {
			return err
		}
		var missing []string
		for _, m := range metricNames {
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(m) + `(_bucket)?[{ ]`).MatchString(s.body) {
				missing = append(missing, m)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("the dashboard queries %v, which /metrics does not have", missing)
		}
		return nil
	})
}

// testAlertCacheNotPersisted: a replica started without a cache directory fires the alert, for
// its instance only.
func testAlertCacheNotPersisted(t *testing.T, evalNow func(...scrape) (firing, error)) {
	t.Helper()
	localUpEnv(t, []string{"EP_SERVER_FLAGS=--cache-dir="}, "start-replica", "2")
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			localUp(t, "stop-replica", "2")
		}
	})
	b, err := os.ReadFile(filepath.Join(localDir(), "replica-2.port"))
	if err != nil {
		t.Fatal(err)
	}
	replica := strings.TrimSpace(string(b))
	eventually(t, 60*time.Second, "EffectivePolicyCacheNotPersisted fires for the replica without a cache", func() error {
		s, err := scrapePort(t, "replica-2", replica)
		if err != nil {
			return err
		}
		f, err := evalNow(s)
		if err != nil {
			return err
		}
		if got := f.values("EffectivePolicyCacheNotPersisted", "instance", nil); strings.Join(got, ",") != "replica-2" {
			return fmt.Errorf("firing for instances %v, want [replica-2]", got)
		}
		return nil
	})
	// The replica would keep the APIService available in testAlertServerNotReady.
	localUp(t, "stop-replica", "2")
	stopped = true
}

// testAlertServerNotReady: with our server stopped (no replica left behind the APIService),
// kube-apiserver reports the APIService unavailable and the alert fires; it does not while the
// server answers (checked by every evaluation before). The server is started again at the end.
func testAlertServerNotReady(t *testing.T, bin, rules, kube string) {
	t.Helper()
	localUp(t, "stop-server")
	t.Cleanup(func() { localUp(t, "start-server") })
	eventually(t, 3*time.Minute, "EffectivePolicyServerNotReady fires with the server stopped", func() error {
		s, err := scrapePort(t, "kube-apiserver", kube)
		if err != nil {
			return err
		}
		f, err := evalAlerts(t, bin, rules, s)
		if err != nil {
			return err
		}
		if got := f.values("EffectivePolicyServerNotReady", "name", nil); strings.Join(got, ",") != "v1alpha1.effectivepolicy.dev" {
			return fmt.Errorf("firing for APIServices %v, want [v1alpha1.effectivepolicy.dev]", got)
		}
		return nil
	})
}
