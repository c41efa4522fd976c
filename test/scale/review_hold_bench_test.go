package scale

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/review"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/benchkit"
)

// BenchmarkReviewHold: how long a review holds the engine (its write lock,
// which live edits and reads of changed outputs wait for) and the CPU it
// takes, for the reviews the server now takes from every user: an
// application developer's route change, and a review at the object bound
// (review.DefaultMaxObjects objects of application namespaces, each
// changed). Each beside its baseline in the same run: the same change made
// for real (Upsert, compute the returned keys), what a live edit costs.
//
//	go test -run '^$' -bench '^BenchmarkReviewHold$' -benchtime 5x ./test/scale -args -scale=1
func BenchmarkReviewHold(b *testing.B) {
	e, objs := steadyEngine(b)
	e.DropMemo()
	route, bound := routeOfApp(b, objs), appObjects(objs, review.DefaultMaxObjects)
	for _, tc := range []struct {
		name   string
		change func() []*unstructured.Unstructured
	}{
		{"route", func() []*unstructured.Unstructured { return []*unstructured.Unstructured{editRoute(route)} }},
		{"bound", func() []*unstructured.Unstructured { return editAll(bound) }},
	} {
		b.Run(tc.name+"/edit", func(b *testing.B) {
			benchHold(b, tc.change, func(p []*unstructured.Unstructured) int {
				var keys []compute.Key
				for _, o := range p {
					keys = append(keys, e.Upsert(o)...)
				}
				computeParallel(e, keys)
				return len(keys)
			})
		})
		b.Run(tc.name+"/review", func(b *testing.B) {
			benchHold(b, tc.change, func(p []*unstructured.Unstructured) int {
				outs, err := e.WhatIf(compute.Proposal{Apply: p})
				if err != nil {
					b.Fatal(err)
				}
				return len(outs)
			})
		})
	}
}

// benchHold runs op on a fresh change b.N times and reports the time op
// takes (for a review: its hold of the engine's lock), the CPU of the
// process meanwhile, the keys op computes and the size of the change.
func benchHold(b *testing.B, change func() []*unstructured.Unstructured, op func([]*unstructured.Unstructured) int) {
	var held, cpu time.Duration
	keys, objects, size := 0, 0, 0
	for i := 0; i < b.N; i++ {
		p := change()
		for _, o := range p {
			raw, _ := json.Marshal(o)
			size += len(raw)
		}
		objects += len(p)
		cpu0, t0 := benchkit.CPUTime(), time.Now()
		keys += op(p)
		held += time.Since(t0)
		cpu += benchkit.CPUTime() - cpu0
	}
	n := float64(b.N)
	b.ReportMetric(float64(held.Microseconds())/1e3/n, "hold-ms/op")
	b.ReportMetric(float64(cpu.Microseconds())/1e3/n, "cpu-ms/op")
	b.ReportMetric(float64(keys)/n, "keys/op")
	b.ReportMetric(float64(objects)/n, "objects/op")
	b.ReportMetric(float64(size)/1024/n, "json-KiB/op")
}

// routeOfApp returns a copy of the first HTTPRoute of an application
// namespace.
func routeOfApp(b *testing.B, objs []*unstructured.Unstructured) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == "HTTPRoute" && strings.HasPrefix(o.GetNamespace(), AppNamespace(0)[:4]) {
			return o.DeepCopy()
		}
	}
	b.Fatal("no HTTPRoute in an application namespace")
	return nil
}

// appObjects returns copies of up to n namespaced objects of application
// namespaces (routes, Services, ReferenceGrants, policies), namespace by
// namespace, as a team's manifests hold them.
func appObjects(objs []*unstructured.Unstructured, n int) []*unstructured.Unstructured {
	byNS := map[string][]*unstructured.Unstructured{}
	for _, o := range objs {
		if strings.HasPrefix(o.GetNamespace(), AppNamespace(0)[:4]) {
			byNS[o.GetNamespace()] = append(byNS[o.GetNamespace()], o)
		}
	}
	var out []*unstructured.Unstructured
	for i := 0; len(out) < n && len(byNS) > 0; i++ {
		ns, ok := byNS[AppNamespace(i)]
		if !ok {
			break
		}
		for _, o := range ns {
			if len(out) < n {
				out = append(out, o.DeepCopy())
			}
		}
	}
	return out
}

// editAll changes every object of objs to a new value: a policy's
// settings, a route's first rule's timeout, another object's labels.
func editAll(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		switch {
		case o.GetKind() == "HTTPRoute":
			out[i] = editRoute(o)
		case o.GetLabels()[LevelLabel] != "":
			editPolicy(o, nextEdit())
			out[i] = o.DeepCopy()
		default:
			l := o.GetLabels()
			if l == nil {
				l = map[string]string{}
			}
			l["bench.effectivepolicy.dev/edit"] = fmt.Sprint(nextEdit())
			o.SetLabels(l)
			out[i] = o.DeepCopy()
		}
	}
	return out
}

// editRoute changes r's first rule's timeout to a new value and returns a
// copy.
func editRoute(r *unstructured.Unstructured) *unstructured.Unstructured {
	rules, _, _ := unstructured.NestedSlice(r.Object, "spec", "rules")
	rules[0].(map[string]interface{})["timeouts"] = map[string]interface{}{"request": fmt.Sprintf("%ds", nextEdit())}
	_ = unstructured.SetNestedSlice(r.Object, rules, "spec", "rules")
	return r.DeepCopy()
}
