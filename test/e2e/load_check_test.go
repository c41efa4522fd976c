//go:build e2e && long

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/inputs"
)

// What the load test checks the outputs and the server against: a recomputation from the
// inputs, and the server's memory.

// recompute reads every input the server reads back from the kube-apiserver (CRDs, Namespaces,
// Services, the Gateway API kinds and the policy kinds the CRDs declare) and computes every
// output with compute.ComputeAll, with the server's default options.
func recompute(ctx context.Context, dyn dynamic.Interface) (map[string]any, error) {
	crds, err := listInputs(ctx, dyn, inputs.CRDResource, "CustomResourceDefinition")
	if err != nil {
		return nil, err
	}
	objs := append([]*unstructured.Unstructured{}, crds...)
	for _, r := range []struct {
		gvr  schema.GroupVersionResource
		kind string
	}{{inputs.NamespaceResource, "Namespace"}, {inputs.ServiceResource, "Service"}} {
		l, err := listInputs(ctx, dyn, r.gvr, r.kind)
		if err != nil {
			return nil, err
		}
		objs = append(objs, l...)
	}
	resources, kinds, err := inputResourcesOf(crds)
	if err != nil {
		return nil, err
	}
	for gr, gvr := range resources {
		l, err := listInputs(ctx, dyn, gvr, kinds[gr])
		if err != nil {
			return nil, err
		}
		objs = append(objs, l...)
	}
	outs, err := compute.ComputeAll(objs, compute.Options{})
	if err != nil {
		return nil, err
	}
	return outputContents(outs)
}

// listInputs lists gvr, setting kind on the items that come without one.
func listInputs(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, kind string) ([]*unstructured.Unstructured, error) {
	l, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", gvr, err)
	}
	out := make([]*unstructured.Unstructured, 0, len(l.Items))
	for i := range l.Items {
		u := &l.Items[i]
		if u.GetKind() == "" {
			u.SetGroupVersionKind(gvr.GroupVersion().WithKind(kind))
		}
		out = append(out, u)
	}
	return out, nil
}

// inputResourcesOf is the resources to read beyond CRDs, Namespaces and Services, as the server's
// informers pick them (pkg/inputs): the served version of each Gateway API kind and the policy
// resources the CRDs declare; and the kind of each resource the CRDs declare.
func inputResourcesOf(crds []*unstructured.Unstructured) (map[schema.GroupResource]schema.GroupVersionResource, map[schema.GroupResource]string, error) {
	engine, err := compute.NewEngine(compute.Options{})
	if err != nil {
		return nil, nil, err
	}
	gatewayKinds := map[string]bool{}
	for _, k := range inputs.GatewayAPIKinds {
		gatewayKinds[k] = true
	}
	resources := map[schema.GroupResource]schema.GroupVersionResource{}
	kinds := map[schema.GroupResource]string{}
	for _, crd := range crds {
		engine.Upsert(crd)
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
		gr := schema.GroupResource{Group: group, Resource: plural}
		kinds[gr] = kind
		if group == inputs.GatewayAPIGroup && gatewayKinds[kind] {
			if v := inputs.ServedVersion(crd); v != "" {
				resources[gr] = gr.WithVersion(v)
			}
		}
	}
	for _, gvr := range engine.PolicyResources() {
		resources[gvr.GroupResource()] = gvr
	}
	return resources, kinds, nil
}

// outputContents is contentOf the targets of each output, by key.
func outputContents(outs map[compute.Key]runtime.Object) (map[string]any, error) {
	want := map[string]any{}
	for k, o := range outs {
		var targets []v1alpha1.Target
		switch o := o.(type) {
		case *v1alpha1.EffectivePolicy:
			targets = o.Targets
		case *v1alpha1.ClusterEffectivePolicy:
			targets = o.Targets
		default:
			return nil, fmt.Errorf("%s: ComputeAll returned %T", k, o)
		}
		c, err := contentOf(targets)
		if err != nil {
			return nil, err
		}
		want[k.String()] = c
	}
	return want, nil
}

func diffContent(got, want map[string]any) error {
	var diffs []string
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			diffs = append(diffs, k+": computed but not served")
		case !reflect.DeepEqual(g, w):
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			diffs = append(diffs, fmt.Sprintf("%s: served %s, computed %s", k, gb, wb))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, k+": served but not computed")
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		if len(diffs) > 10 {
			diffs = append(diffs[:10], fmt.Sprintf("... %d more", len(diffs)-10))
		}
		return fmt.Errorf("%s", strings.Join(diffs, "\n"))
	}
	return nil
}

// serverPID reads the pid hack/local-up.sh recorded for the server.
func serverPID(t *testing.T) int {
	t.Helper()
	pid := pidOf(t, "effectivepolicy-apiserver")
	if _, err := readRSS(pid); err != nil {
		t.Fatalf("server pid %d: %v", pid, err)
	}
	return pid
}

// readRSS returns VmRSS of pid in bytes.
func readRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" && f[2] == "kB" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// checkLoadMemory: the first third of the samples is warm-up (caches, connections, 200 watch
// streams, the store's history filling); the median of the last third may exceed the median of
// the middle third by loadRSSFactor plus loadRSSSlack. Medians of many samples smooth the saw
// tooth of the Go GC (the heap grows to about twice the live data before a collection, and the
// runtime returns freed pages lazily); a leak proportional to the work done grows the last third
// beyond it.
func checkLoadMemory(t *testing.T, samples []int64) {
	t.Helper()
	for _, s := range samples {
		if s < 0 {
			t.Fatalf("the server process disappeared during the load")
		}
	}
	if len(samples) < 9 {
		t.Fatalf("only %d memory samples; the run is too short to judge", len(samples))
	}
	n := len(samples) / 3
	median := func(s []int64) int64 {
		c := append([]int64(nil), s...)
		sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
		return c[len(c)/2]
	}
	warm, mid, end := median(samples[:n]), median(samples[n:2*n]), median(samples[2*n:])
	maxRSS := int64(0)
	for _, s := range samples {
		maxRSS = max(maxRSS, s)
	}
	const mib = 1 << 20
	limit := mid + int64(float64(mid)*loadRSSFactor) + loadRSSSlack
	t.Logf("load: server RSS median warm-up %d MiB, middle %d MiB, end %d MiB (limit %d MiB), max %d MiB, %d samples",
		warm/mib, mid/mib, end/mib, limit/mib, maxRSS/mib, len(samples))
	if end > limit {
		t.Errorf("server memory grew: median RSS %d MiB in the last third, %d MiB in the middle third (limit %d MiB)", end/mib, mid/mib, limit/mib)
	}
}
