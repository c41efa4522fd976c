// Package load creates the generated benchmark topology (package scale) in
// a real control plane, before the server starts: the policy CRDs until
// they are Established, then Namespaces, then everything else, concurrently.
package load

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/report"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Topology creates the topology of package scale at scale sc (seed seed)
// through dc with workers concurrent requests, and says how long it took.
func Topology(ctx context.Context, dc dynamic.Interface, sc float64, seed uint64, workers int) (report.LoadResult, error) {
	objs := scale.Generate(scale.Options{Scale: sc, Seed: seed})
	res := report.LoadResult{Scale: sc, Seed: seed, Objects: len(objs), Counts: map[string]int{}, Workers: workers}
	for k, v := range scale.Count(objs) {
		res.Counts[k] = v
	}
	start := time.Now()

	// Phase 1: the policy CRDs, then wait until every one is Established
	// (creating their objects before that is refused).
	var crds, nss, rest []*unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "CustomResourceDefinition":
			crds = append(crds, o)
		case "Namespace":
			nss = append(nss, o)
		default:
			rest = append(rest, o)
		}
	}
	var retries atomic.Int64
	if err := createAll(ctx, dc, crds, workers, &retries); err != nil {
		return res, err
	}
	for _, c := range crds {
		if err := waitEstablished(ctx, dc, c.GetName()); err != nil {
			return res, err
		}
	}
	res.CRDSeconds = time.Since(start).Seconds()
	// Phase 2: Namespaces, which every namespaced object needs; phase 3:
	// everything else, in the generator's order (GatewayClass, Gateways,
	// Services, HTTPRoutes, policies) but concurrently.
	if err := createAll(ctx, dc, nss, workers, &retries); err != nil {
		return res, err
	}
	if err := createAll(ctx, dc, rest, workers, &retries); err != nil {
		return res, err
	}
	res.TotalSeconds = time.Since(start).Seconds()
	res.ObjectsPerS = float64(len(objs)) / res.TotalSeconds
	res.Retries = retries.Load()
	return res, nil
}

// prepare adapts a generated object to a real API server: no resourceVersion,
// and Services headless (the local control plane's Service CIDR is a /24, far
// too small for 20,000 cluster IPs; the server reads only names and ports).
func prepare(o *unstructured.Unstructured) *unstructured.Unstructured {
	c := o.DeepCopy()
	c.SetResourceVersion("")
	if c.GetKind() == "Service" {
		_ = unstructured.SetNestedField(c.Object, "None", "spec", "clusterIP")
	}
	return c
}

func createAll(ctx context.Context, dc dynamic.Interface, objs []*unstructured.Unstructured, workers int, retries *atomic.Int64) error {
	ch := make(chan *unstructured.Unstructured)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range ch {
				if err := create(ctx, dc, o, retries); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, o := range objs {
		ch <- o
	}
	close(ch)
	wg.Wait()
	return firstErr
}

func create(ctx context.Context, dc dynamic.Interface, o *unstructured.Unstructured, retries *atomic.Int64) error {
	gvr := scale.Resource(o)
	obj := prepare(o)
	var ri dynamic.ResourceInterface = dc.Resource(gvr)
	if ns := o.GetNamespace(); ns != "" {
		ri = dc.Resource(gvr).Namespace(ns)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err := ri.Create(ctx, obj, metav1.CreateOptions{})
		switch {
		case err == nil, apierrors.IsAlreadyExists(err):
			return nil
		// Right after a CRD is Established, its endpoint can still 404 for a
		// moment; a busy server can also throttle: retry those.
		case (apierrors.IsNotFound(err) || apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) ||
			apierrors.IsTimeout(err) || apierrors.IsInternalError(err)) && time.Now().Before(deadline):
			retries.Add(1)
			time.Sleep(200 * time.Millisecond)
		default:
			return fmt.Errorf("create %s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
}

func waitEstablished(ctx context.Context, dc dynamic.Interface, name string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		c, err := dc.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			conds, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
			for _, ci := range conds {
				m, _ := ci.(map[string]interface{})
				if m["type"] == "Established" && m["status"] == "True" {
					return nil
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("CRD %s not Established after 2 minutes", name)
}
