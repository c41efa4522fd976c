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
