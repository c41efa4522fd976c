package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale"
)

// loadResult is what `e2ebench load` writes for `e2ebench measure`.
type loadResult struct {
	Scale        float64        `json:"scale"`
	Seed         uint64         `json:"seed"`
	Objects      int            `json:"objects"`
	Counts       map[string]int `json:"counts"`
	CRDSeconds   float64        `json:"crdSeconds"`
	TotalSeconds float64        `json:"totalSeconds"`
	ObjectsPerS  float64        `json:"objectsPerSecond"`
	Workers      int            `json:"workers"`
	Retries      int64          `json:"retries"`
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

func runLoad(args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the control plane")
	sc := fs.Float64("scale", 1, "topology scale (1 = the large benchmark size (scale 1))")
	seed := fs.Uint64("seed", 1, "generator seed")
	workers := fs.Int("workers", 48, "concurrent create requests")
	out := fs.String("o", "", "write the result as JSON here")
	_ = fs.Parse(args)

	cfg, err := restConfig(*kubeconfig)
	if err != nil {
		return err
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx := context.Background()
	objs := scale.Generate(scale.Options{Scale: *sc, Seed: *seed})
	res := loadResult{Scale: *sc, Seed: *seed, Objects: len(objs), Counts: map[string]int{}, Workers: *workers}
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
	if err := createAll(ctx, dc, crds, *workers, &retries); err != nil {
		return err
	}
	for _, c := range crds {
		if err := waitEstablished(ctx, dc, c.GetName()); err != nil {
			return err
		}
	}
	res.CRDSeconds = time.Since(start).Seconds()
	// Phase 2: Namespaces, which every namespaced object needs; phase 3:
	// everything else, in the generator's order (GatewayClass, Gateways,
	// Services, HTTPRoutes, policies) but concurrently.
	if err := createAll(ctx, dc, nss, *workers, &retries); err != nil {
		return err
	}
	if err := createAll(ctx, dc, rest, *workers, &retries); err != nil {
		return err
	}
	res.TotalSeconds = time.Since(start).Seconds()
	res.ObjectsPerS = float64(len(objs)) / res.TotalSeconds
	res.Retries = retries.Load()
	fmt.Fprintf(os.Stderr, "e2ebench load: %d objects in %.1f s (%.0f/s; CRDs established after %.1f s; %d retries)\n",
		len(objs), res.TotalSeconds, res.ObjectsPerS, res.CRDSeconds, res.Retries)
	return writeJSON(*out, res)
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

func writeJSON(path string, v interface{}) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if path == "" || path == "-" {
		_, err = os.Stdout.Write(data)
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func readJSON(path string, v interface{}) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

func sortedKeys(m map[string]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
