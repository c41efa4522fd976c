//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/informers/externalversions"
)

// The generated shared informer, with client-go's default settings, syncs
// through kube-apiserver's aggregator and its lister follows a policy as it
// comes and goes.
func TestGeneratedInformer(t *testing.T) {
	const ns = "e2e-informer"
	applyColorPolicyCRDs(t)
	createNamespace(t, ns)
	kubectlApply(t, `apiVersion: v1
kind: Service
metadata: {name: api, namespace: `+ns+`}
spec: {ports: [{name: http, port: 80}]}
`)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	factory := externalversions.NewSharedInformerFactory(clientset(t, ""), 0)
	informer := factory.Effectivepolicy().V1alpha1().EffectivePolicies()
	lister := informer.Lister()
	informer.Informer() // register before Start
	factory.Start(ctx.Done())
	// Shutdown waits for the informers, which stop when ctx is canceled.
	defer func() { cancel(); factory.Shutdown() }()
	syncCtx, syncCancel := context.WithTimeout(ctx, 60*time.Second)
	defer syncCancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), informer.Informer().HasSynced) {
		t.Fatal("the generated EffectivePolicy informer did not sync within 60s")
	}
	t.Logf("informer synced")
	if _, err := lister.EffectivePolicies(ns).Get("api"); !apierrors.IsNotFound(err) {
		t.Fatalf("before any policy: want NotFound from the lister, got %v", err)
	}

	kubectlApply(t, `apiVersion: colors.example.com/v1
kind: ColorPolicy
metadata: {name: informer-color, namespace: `+ns+`}
spec:
  targetRefs: [{group: "", kind: Service, name: api}]
  color: teal
`)
	eventually(t, 60*time.Second, "the informer's lister to hold "+ns+"/api", func() error {
		ep, err := lister.EffectivePolicies(ns).Get("api")
		if err != nil {
			return err
		}
		if len(ep.Targets) != 1 || ep.Targets[0].Kind != "Service" || len(ep.Targets[0].Policies) != 1 {
			return fmt.Errorf("unexpected targets %+v", ep.Targets)
		}
		if got := string(ep.Targets[0].Policies[0].Effective[0].Spec.Raw); got != `{"color":"teal"}` {
			return fmt.Errorf("effective spec %s, want {\"color\":\"teal\"}", got)
		}
		return nil
	})

	t.Logf("lister holds the policy's effect")
	kubectl(t, "delete", "colorpolicies.colors.example.com", "informer-color", "-n", ns)
	eventually(t, 60*time.Second, "the informer's lister to drop "+ns+"/api", func() error {
		if _, err := lister.EffectivePolicies(ns).Get("api"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still present")
		}
		return nil
	})
	t.Logf("lister dropped it")
}
