package istio

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// telemetryPolicy is a Telemetry of a context: its namespace and name, what it names ("" for
// nothing, "gw" a targetRef to the Gateway, "sel" a selector on its pods, "svc" a targetRef to
// the Service) and the rest of its spec (JSON). Policies are created one second apart, in order.
type telemetryPolicy struct {
	ns, name, target, spec string
}

// telemetryFoldOf folds ps at the Gateway bar/gw (or at the Service bar/svc for a waypoint) and
// renders the spec, the field sources and each policy's outcome.
func telemetryFoldOf(t *testing.T, ps []telemetryPolicy, flavor string) (string, string, string) {
	t.Helper()
	gw := topology.NodeID{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "bar", Name: "gw"}
	svc := topology.NodeID{Kind: "Service", Namespace: "bar", Name: "svc"}
	targets := map[string]map[string]interface{}{
		"gw":  {"targetRef": map[string]interface{}{"group": topology.GatewayGroup, "kind": "Gateway", "name": "gw"}},
		"svc": {"targetRefs": []interface{}{map[string]interface{}{"group": "", "kind": "Service", "name": "svc"}}},
		"sel": {"selector": map[string]interface{}{"matchLabels": map[string]interface{}{semantics.GatewayNameLabel: "gw"}}},
	}
	var es []semantics.FoldEntry
	for i, p := range ps {
		var spec map[string]interface{}
		if err := json.Unmarshal([]byte(p.spec), &spec); err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		raw := map[string]interface{}{}
		for k, v := range spec {
			raw[k] = v
		}
		for k, v := range targets[p.target] {
			raw[k] = v
		}
		pol := &semantics.Policy{
			ID:          semantics.PolicyID{GK: schema.GroupKind{Group: telemetryGroup, Kind: telemetryKind}, Namespace: p.ns, Name: p.name},
			DisplayName: p.ns + "/" + p.name,
			Created:     time.Unix(int64(1000+i), 0),
			Raw:         map[string]interface{}{"spec": raw},
			Entries:     []semantics.Entry{{Spec: spec}},
		}
		node := topology.NamespaceNode(p.ns)
		switch p.target {
		case "gw", "sel":
			node = gw
		case "svc":
			node = svc
		}
		es = append(es, semantics.FoldEntry{Policy: pol, Entry: &pol.Entries[0], Node: node})
	}
	fv := (Profile{}).Fold(es, flavor)
	return renderTelemetryFold(t, es, fv)
}

func renderTelemetryFold(t *testing.T, es []semantics.FoldEntry, fv semantics.FoldValue) (string, string, string) {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(merge.ToJSON(merge.StripNulls(fv.Acc))); err != nil {
		t.Fatal(err)
	}
	var fs []string
	survived := make([]int, len(es))
	merge.WalkLeaves(merge.StripNulls(fv.Acc), "", func(ptr string, src int) {
		fs = append(fs, ptr+"="+es[src].Policy.DisplayName)
		survived[src]++
	})
	sort.Strings(fs)
	var outs []string
	for i, e := range es {
		o := "Enforced"
		switch {
		case fv.Apart[i]:
			o = "Apart"
		case fv.ConflictedBy != nil && fv.ConflictedBy[i] != nil:
			o = "Conflicted by " + fv.ConflictedBy[i].DisplayName
		case survived[i] > fv.Totals[i]:
			t.Errorf("%s: %d leaves survive of %d", e.Policy.DisplayName, survived[i], fv.Totals[i])
		case survived[i] == 0 && fv.Totals[i] > 0:
			o = "Overridden"
		case survived[i] < fv.Totals[i]:
			o = "PartiallyEnforced"
		}
		outs = append(outs, e.Policy.DisplayName+" "+o)
	}
	return strings.TrimSpace(b.String()), strings.Join(fs, " "), strings.Join(outs, ", ")
}
