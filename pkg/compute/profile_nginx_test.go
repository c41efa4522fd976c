package compute

import (
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// TestNGINXRejectedOnEverySection: a policy rejected on one Service (it overlaps an older one
// there) is Conflicted on the section of another Service it targets too, while that Service's
// own policy, which nothing beat, stays in effect.
func TestNGINXRejectedOnEverySection(t *testing.T) {
	topo := `
apiVersion: v1
kind: Namespace
metadata: {name: ng}
---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: ng}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: svc2, namespace: ng}
`
	pols := `
apiVersion: gateway.nginx.org/v1alpha1
kind: UpstreamSettingsPolicy
metadata: {name: older, namespace: ng}
spec:
  targetRefs: [{group: "", kind: Service, name: svc2}]
  zoneSize: 64k
---
apiVersion: gateway.nginx.org/v1alpha1
kind: UpstreamSettingsPolicy
metadata: {name: whole, namespace: ng}
spec:
  targetRefs: [{group: "", kind: Service, name: svc}]
  keepAlive: {requests: 3}
---
apiVersion: gateway.nginx.org/v1alpha1
kind: UpstreamSettingsPolicy
metadata: {name: rejected, namespace: ng}
spec:
  targetRefs:
  - {group: "", kind: Service, name: svc2}
  - {group: "", kind: Service, name: svc, sectionName: http}
  zoneSize: 128k
`
	objs := append(descriptorCRDs(t, "gateway.nginx.org"), worldObjs(t, topo, pols)...)
	got, err := ComputeAll(objs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tp := findTP(got[Key{"ng", "svc"}], "Service", "gateway.nginx.org", "UpstreamSettingsPolicy")
	if tp == nil {
		t.Fatalf("no UpstreamSettingsPolicy on Service ng/svc")
	}
	outcomes := map[string]v1alpha1.Outcome{}
	for _, s := range tp.Sources {
		outcomes[s.Name] = s.Outcome
	}
	if outcomes["rejected"] != v1alpha1.OutcomeConflicted || outcomes["whole"] == v1alpha1.OutcomeConflicted {
		t.Errorf("outcomes on svc: %v (want rejected Conflicted, whole not)", outcomes)
	}
}

// TestNGINXContextOfRejectedPoliciesOnly: a Gateway whose only ClientSettingsPolicy was
// rejected on another Gateway gets no effective settings from it.
func TestNGINXContextOfRejectedPoliciesOnly(t *testing.T) {
	topo := `
apiVersion: v1
kind: Namespace
metadata: {name: ng}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw1, namespace: ng}
spec: {gatewayClassName: x, listeners: [{name: http, port: 80, protocol: HTTP}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw2, namespace: ng}
spec: {gatewayClassName: x, listeners: [{name: http, port: 80, protocol: HTTP}]}
`
	pols := `
apiVersion: gateway.nginx.org/v1alpha1
kind: ClientSettingsPolicy
metadata: {name: older, namespace: ng}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw1}
  body: {maxSize: 1m}
---
apiVersion: gateway.nginx.org/v1alpha1
kind: ClientSettingsPolicy
metadata: {name: newer, namespace: ng}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: Gateway, name: gw1}
  - {group: gateway.networking.k8s.io, kind: Gateway, name: gw2}
  body: {maxSize: 2m}
`
	objs := append(descriptorCRDs(t, "gateway.nginx.org"), worldObjs(t, topo, pols)...)
	got, err := ComputeAll(objs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tp := findTP(got[Key{"ng", "gw2"}], "Gateway", "gateway.nginx.org", "ClientSettingsPolicy")
	if tp == nil {
		t.Fatalf("no ClientSettingsPolicy on Gateway ng/gw2")
	}
	for _, e := range tp.Effective {
		if len(e.FieldSources) > 0 {
			t.Errorf("gw2 via %v: spec %s from %v, want nothing (newer is rejected on gw1)", e.Via, e.Spec.Raw, e.FieldSources)
		}
	}
	if len(tp.Sources) != 1 || tp.Sources[0].Outcome != v1alpha1.OutcomeConflicted {
		t.Errorf("gw2 sources %+v, want newer Conflicted", tp.Sources)
	}
}
