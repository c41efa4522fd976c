//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	epclient "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned/typed/effectivepolicy/v1alpha1"
)

// A policy CRD installed after the server started is discovered (docs/spec.md §4: the server watches
// CustomResourceDefinitions and starts informers as policy kinds appear), and forgotten when the
// CRD goes away.
func TestPolicyKindInstalledAfterStartIsDiscovered(t *testing.T) {
	const ns = "e2e-late"
	_, _, _ = kubectlRaw(nil, "delete", "crd", "latepolicies.late.e2e.effectivepolicy.dev", "--ignore-not-found", "--wait=true")
	createNamespace(t, ns)
	kubectlApply(t, `apiVersion: v1
kind: Service
metadata: {name: web, namespace: `+ns+`}
spec: {ports: [{name: http, port: 80}]}
`)
	kubectlApply(t, latePolicyCRD)
	t.Cleanup(func() {
		_, _, _ = kubectlRaw(nil, "delete", "crd", "latepolicies.late.e2e.effectivepolicy.dev", "--ignore-not-found", "--wait=false")
	})
	waitCondition(t, "Established", "crd/latepolicies.late.e2e.effectivepolicy.dev")
	kubectlApply(t, `apiVersion: late.e2e.effectivepolicy.dev/v1
kind: LatePolicy
metadata: {name: late-1, namespace: `+ns+`}
spec:
  targetRef: {group: "", kind: Service, name: web}
  level: 7
`)

	cs := clientset(t, "").EffectivepolicyV1alpha1()
	ctx := context.Background()
	eventually(t, 60*time.Second, "EffectivePolicy e2e-late/web lists LatePolicy late-1", func() error {
		return lateEnforcedOnWeb(ctx, cs.EffectivePolicies(ns), ns)
	})

	// The CRD goes (and with it every LatePolicy): nothing reaches web any more.
	kubectl(t, "delete", "crd", "latepolicies.late.e2e.effectivepolicy.dev", "--wait=true", "--timeout=60s")
	eventually(t, 60*time.Second, "EffectivePolicy e2e-late/web gone with the CRD", func() error {
		_, err := cs.EffectivePolicies(ns).Get(ctx, "web", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("want NotFound, got %v", err)
	})
}

// latePolicyCRD is a Direct policy kind, LatePolicy, that no one installs
// before the server starts.
const latePolicyCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: latepolicies.late.e2e.effectivepolicy.dev
  labels:
    gateway.networking.k8s.io/policy: Direct
spec:
  group: late.e2e.effectivepolicy.dev
  scope: Namespaced
  names: {kind: LatePolicy, listKind: LatePolicyList, plural: latepolicies, singular: latepolicy}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// lateEnforcedOnWeb: the EffectivePolicy web of eps (namespace ns) lists
// LatePolicy late-1 as Direct and Enforced on Service web.
func lateEnforcedOnWeb(ctx context.Context, eps epclient.EffectivePolicyInterface, ns string) error {
	ep, err := eps.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, tg := range ep.Targets {
		if tg.Kind != "Service" || tg.Name != "web" {
			continue
		}
		for _, p := range tg.Policies {
			if p.Group != "late.e2e.effectivepolicy.dev" || p.Kind != "LatePolicy" {
				continue
			}
			if p.Class != "Direct" {
				return fmt.Errorf("class %q, want Direct", p.Class)
			}
			for _, s := range p.Sources {
				if s.Namespace == ns && s.Name == "late-1" {
					if s.Outcome != "Enforced" {
						return fmt.Errorf("late-1 outcome %q, want Enforced", s.Outcome)
					}
					return nil
				}
			}
			return fmt.Errorf("late-1 not among the sources %+v", p.Sources)
		}
	}
	return fmt.Errorf("no LatePolicy on Service web: %+v", ep.Targets)
}
