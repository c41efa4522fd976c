package kgateway

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// ClassKgPerPortOrigins is the disagreement docs/differential.md explains
// for kgateway v2.2.0 (github.com/kgateway-dev/kgateway/v2 v2.2.0).
const ClassKgPerPortOrigins = "kgateway-perport-origins-name-first-policy"

func init() {
	differential.RegisterKnown(differential.KnownClass{Name: ClassKgPerPortOrigins, Impl: "kgateway", Match: kgPerPortOrigins})
}

// kgPerPortOrigins (seeds 22, 48): the merge origins kgateway writes for a
// ListenerPolicy's perPort entry of port P name only the oldest policy with
// an entry for P, though newer ones fill in settings it lacks (Envoy gets
// their values: the value checks agree). pluginsdk/policy/merge.go
// MergePolicies merges a hierarchy level's policies (recording
// "perPortPolicy[P]" for the first and "perPortPolicy[P].<setting>" for the
// others), then merges the levels' results into a fresh policy with no
// PolicyRef, where listenerpolicy/merge.go mergePerPort takes the level's
// entry whole, calling MergeOrigins.SetOne("perPortPolicy[P]", nil, ...),
// which copies that one key: the others are dropped. So the check's theirs
// is exactly the oldest ListenerPolicy of the Gateway with an entry for P,
// and ours names it and only other ListenerPolicies of the Gateway with an
// entry for P.
func kgPerPortOrigins(c differential.Check, objs []*unstructured.Unstructured) bool {
	var port int64
	if c.Kind != gen.LP || c.Target.Kind != "Gateway" {
		return false
	}
	if _, err := fmt.Sscanf(c.Field, "/perPort[port=%d]", &port); err != nil || c.Theirs == "" || strings.Contains(c.Theirs, ",") {
		return false
	}
	withPort := perPortPolicies(objs, c.Target.Namespace, c.Target.Name, port)
	if len(withPort) < 2 || withPort[0] != c.Theirs {
		return false
	}
	ours := strings.Split(c.Ours, ",")
	if len(ours) < 2 || !contains(ours, c.Theirs) {
		return false
	}
	for _, o := range ours {
		if !contains(withPort, o) {
			return false
		}
	}
	return true
}

// perPortPolicies are the ListenerPolicies ("namespace/name") targeting
// Gateway ns/name with a perPort entry for port, the oldest first.
func perPortPolicies(objs []*unstructured.Unstructured, ns, name string, port int64) []string {
	type aged struct{ at, name string }
	var out []aged
	for _, o := range objs {
		if o.GetKind() != gen.LP || o.GetNamespace() != ns || !targetsGateway(o, name) {
			continue
		}
		entries, _, _ := unstructured.NestedSlice(o.Object, "spec", "perPort")
		for _, e := range entries {
			if m, _ := e.(map[string]any); differential.Scalar(m["port"]) == fmt.Sprint(port) {
				out = append(out, aged{o.GetCreationTimestamp().UTC().Format("2006-01-02T15:04:05Z"), ns + "/" + o.GetName()})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at < out[j].at })
	names := make([]string, len(out))
	for i, a := range out {
		names[i] = a.name
	}
	return names
}

func targetsGateway(o *unstructured.Unstructured, name string) bool {
	refs, _, _ := unstructured.NestedSlice(o.Object, "spec", "targetRefs")
	for _, r := range refs {
		if m, _ := r.(map[string]any); m["kind"] == "Gateway" && m["name"] == name {
			return true
		}
	}
	return false
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
