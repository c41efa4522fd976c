package envoygateway

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// egPatchPolicy is an EnvoyPatchPolicy in a Gateway's xdsIR. Envoy Gateway
// v1.9.0 (internal/gatewayapi/envoypatchpolicy.go ProcessEnvoyPatchPolicies)
// appends every policy whose targetRef names the Gateway, in the order
// (*Resources).Sort leaves them (priority, then age, then namespace/name),
// and copies its patches only when the targetRef's kind is Gateway: a
// policy without patches there is one it refused.
type egPatchPolicy struct {
	Name        string `json:"name"`
	Namespace   string `json:"namespace"`
	JSONPatches []any  `json:"jsonPatches"`
}

// egPatchChecks compares, for every Gateway, the EnvoyPatchPolicies applied
// to it in order: Envoy Gateway's xdsIR of the Gateway against the items of
// our effective list.
func egPatchChecks(objs []*unstructured.Unstructured, ours *differential.Ours, o *egOutput) []differential.Check {
	var checks []differential.Check
	for _, gw := range objs {
		if gw.GetKind() != "Gateway" {
			continue
		}
		var theirs []string
		for _, p := range o.XdsIR[gw.GetNamespace()+"/"+gw.GetName()].EnvoyPatchPolicies {
			if len(p.JSONPatches) > 0 {
				theirs = append(theirs, p.Namespace+"/"+p.Name)
			}
		}
		t := differential.Node{Kind: "Gateway", Namespace: gw.GetNamespace(), Name: gw.GetName()}
		checks = append(checks, differential.Check{Kind: gen.EPP, Field: "order",
			Subject: "Gateway " + t.Namespace + "/" + t.Name,
			Theirs:  strings.Join(theirs, ","),
			Ours:    strings.Join(ours.Ordered(t, gen.EGGroup, gen.EPP, []differential.Node{t}), ","),
			Target:  t, Path: []differential.Node{t}})
	}
	return checks
}
