package live

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/reach"
)

// reachDiff compares what the reach Stores serve with what the output
// Stores say (docs/spec.md §8: a PolicyReach lists exactly the targets whose
// EffectivePolicy lists the policy as a source, with the same verdicts),
// and the reaches' names with the policies'. It returns the differences.
func reachDiff(t *testing.T, l *Live, policies []*unstructured.Unstructured) []string {
	t.Helper()
	want := outputEntryLines(t, l)
	got, names := servedReachLines(t, l)
	var d []string
	for k, n := range want {
		if got[k] != n {
			d = append(d, fmt.Sprintf("outputs say %d× %s, reaches %d×", n, k, got[k]))
		}
	}
	for k, n := range got {
		if _, ok := want[k]; !ok {
			d = append(d, fmt.Sprintf("reaches say %d× %s, outputs never", n, k))
		}
	}
	wantNames := map[string]bool{}
	for _, p := range policies {
		key := p.GetName()
		if p.GetNamespace() != "" {
			key = p.GetNamespace() + "/" + key
		}
		wantNames[key] = true
	}
	for k := range wantNames {
		if !names[k] {
			d = append(d, "no reach for policy "+k)
		}
	}
	for k := range names {
		if !wantNames[k] {
			d = append(d, "a reach for no policy: "+k)
		}
	}
	sort.Strings(d)
	return d
}

// outputEntryLines counts the source entries of the served outputs, by
// entryLine.
func outputEntryLines(t *testing.T, l *Live) map[string]int {
	t.Helper()
	ctx := context.Background()
	want := map[string]int{}
	for _, b := range []*Backend{l.EffectivePolicies(), l.ClusterEffectivePolicies()} {
		objs, _, err := b.List(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			dec, err := o.Decode()
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range reach.FromOutput(dec) {
				want[entryLine(e.Policy.String(), e.Group, e.Kind, e.Reach)]++
			}
		}
	}
	return want
}

// servedReachLines counts the reaches the reach Stores serve, by entryLine,
// and returns the reaches' names; it checks each reach's summary.
func servedReachLines(t *testing.T, l *Live) (got map[string]int, names map[string]bool) {
	t.Helper()
	ctx := context.Background()
	got = map[string]int{}
	names = map[string]bool{}
	for _, b := range []*Backend{l.PolicyReaches(), l.ClusterPolicyReaches()} {
		objs, _, err := b.List(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			key := o.Name
			if o.Namespace != "" {
				key = o.Namespace + "/" + o.Name
			}
			names[key] = true
			ps, err := o.Policies()
			if err != nil {
				t.Fatal(err)
			}
			if s := o.Summary.Reach; s == nil {
				t.Fatalf("%s has no reach summary", key)
			}
			for _, p := range ps {
				if int(p.Summary.Targets) != len(p.Reaches) || p.HiddenTargets != 0 {
					t.Errorf("%s %s: summary %+v, hidden %d, for %d reaches", key, p.Kind, p.Summary, p.HiddenTargets, len(p.Reaches))
				}
				for _, r := range p.Reaches {
					got[entryLine(key, p.Group, p.Kind, r)]++
				}
			}
		}
	}
	return got, names
}

func entryLine(policy, group, kind string, r v1alpha1.Reach) string {
	return strings.Join([]string{policy, group, kind, r.Target.Group, r.Target.Kind, r.Target.Namespace, r.Target.Name, r.Target.SectionName,
		r.AttachedTo.Kind, r.AttachedTo.Name, r.AttachedTo.SectionName, string(r.Stanza), string(r.Outcome), r.Message}, "|")
}

func colorPolicy(name, gateway string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "colors.example.com/v1",
		"kind":       "ColorPolicy",
		"metadata":   map[string]interface{}{"name": name, "namespace": "colors"},
		"spec": map[string]interface{}{
			"targetRefs": []interface{}{map[string]interface{}{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": gateway}},
			"color":      "red",
		},
	}}
	u.SetLabels(labels)
	return u
}

// reachEvent is a PolicyReach watch event as the test compares it: type,
// name, and the targets reached.
func reachEvent(t *testing.T, e watch.Event) string {
	t.Helper()
	o, ok := e.Object.(*encoded.Object)
	if !ok {
		t.Fatalf("event object %T", e.Object)
	}
	var targets []string
	ps, err := o.Policies()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		for _, r := range p.Reaches {
			targets = append(targets, r.Target.Kind+"/"+r.Target.Name)
		}
	}
	return fmt.Sprintf("%s %s/%s %v %v", e.Type, o.Namespace, o.Name, o.Labels, targets)
}

// nextReach waits for w's next event, as reachEvent describes it.
func nextReach(t *testing.T, w watch.Interface) string {
	t.Helper()
	select {
	case e := <-w.ResultChan():
		return reachEvent(t, e)
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for a watch event")
		return ""
	}
}

// TestPolicyReachWatchEvents: edits that change what a policy reaches (or
// its labels) produce one event, on its PolicyReach only; a policy that
// nothing touched gets none.
func TestPolicyReachWatchEvents(t *testing.T) {
	base := parseDocs(t, filepath.Join(scenarioDir, "crds", "colorpolicies.yaml"))
	base = append(base, parseDocs(t, filepath.Join(scenarioDir, "topology.yaml"))...)
	all := append(append([]*unstructured.Unstructured{}, gatewayCRDs...), base...)
	bystander := colorPolicy("bystander", "g1", nil)
	bystander.Object["spec"].(map[string]interface{})["targetRefs"] = []interface{}{map[string]interface{}{"group": "", "kind": "Service", "name": "b2"}}
	all = append(all, bystander)
	l, client := runRealEngine(t, all, func(u *unstructured.Unstructured) *unstructured.Unstructured { return u })
	ctx := context.Background()

	b := l.PolicyReaches()
	_, rv, err := b.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	w, err := b.Watch(ctx, "", rv)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	policyGVR := schema.GroupVersionResource{Group: "colors.example.com", Version: "v1", Resource: "colorpolicies"}
	routeRes := schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}
	steps := []struct {
		name string
		do   func() error
		want string
	}{
		{"create", func() error {
			_, err := client.Resource(policyGVR).Namespace("colors").Create(ctx, colorPolicy("gw", "g1", nil), metav1.CreateOptions{})
			return err
		}, "ADDED colors/gw map[] [Service/b1 Gateway/g1 HTTPRoute/r1 HTTPRoute/r2]"},
		{"labels", func() error {
			_, err := client.Resource(policyGVR).Namespace("colors").Update(ctx, colorPolicy("gw", "g1", map[string]string{"team": "infra"}), metav1.UpdateOptions{})
			return err
		}, "MODIFIED colors/gw map[team:infra] [Service/b1 Gateway/g1 HTTPRoute/r1 HTTPRoute/r2]"},
		{"retarget", func() error {
			_, err := client.Resource(policyGVR).Namespace("colors").Update(ctx, colorPolicy("gw", "g2", map[string]string{"team": "infra"}), metav1.UpdateOptions{})
			return err
		}, "MODIFIED colors/gw map[team:infra] [Service/b1 Service/b2 Gateway/g2 HTTPRoute/r3 HTTPRoute/r4]"},
		{"route under its Gateway", func() error {
			r := &unstructured.Unstructured{Object: map[string]interface{}{
				"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
				"metadata": map[string]interface{}{"name": "r5", "namespace": "colors"},
				"spec":     map[string]interface{}{"parentRefs": []interface{}{map[string]interface{}{"name": "g2"}}},
			}}
			_, err := client.Resource(routeRes).Namespace("colors").Create(ctx, r, metav1.CreateOptions{})
			return err
		}, "MODIFIED colors/gw map[team:infra] [Service/b1 Service/b2 Gateway/g2 HTTPRoute/r3 HTTPRoute/r4 HTTPRoute/r5]"},
		{"delete", func() error {
			return client.Resource(policyGVR).Namespace("colors").Delete(ctx, "gw", metav1.DeleteOptions{})
		}, "DELETED colors/gw map[team:infra] [Service/b1 Service/b2 Gateway/g2 HTTPRoute/r3 HTTPRoute/r4 HTTPRoute/r5]"},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := nextReach(t, w); got != s.want {
			t.Errorf("%s:\n got %s\nwant %s", s.name, got, s.want)
		}
		// Exactly one event: nothing for the bystander, whose reach (b2,
		// also reached by gw after the retarget) keeps its verdicts.
		select {
		case e := <-w.ResultChan():
			t.Errorf("%s: unexpected event %s", s.name, reachEvent(t, e))
		case <-time.After(100 * time.Millisecond):
		}
	}
}
