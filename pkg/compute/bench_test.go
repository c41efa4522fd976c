package compute

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale"
)

var benchSizes = []struct {
	name string
	g    genSpec
}{
	// 2,000 routes, 500 policies.
	{"routes=2000/policies=500", genSpec{namespaces: 20, gatewaysPerNS: 2, routesPerGW: 50, servicesPerNS: 20, policies: 500, withListenerSet: true}},
	// 20,000 routes, 5,000 policies (the performance goal).
	{"routes=20000/policies=5000", genSpec{namespaces: 100, gatewaysPerNS: 4, routesPerGW: 50, servicesPerNS: 50, policies: 5000, withListenerSet: true}},
}

// BenchmarkComputeAll: full computation of every key from scratch.
func BenchmarkComputeAll(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			topo, pols := genTopology(sz.g)
			objs := append(append([]*unstructured.Unstructured{}, topo...), pols...)
			b.ReportAllocs()
			b.ResetTimer()
			var n int
			for i := 0; i < b.N; i++ {
				out, err := ComputeAll(objs, Options{})
				if err != nil {
					b.Fatal(err)
				}
				n = len(out)
			}
			b.ReportMetric(float64(n), "keys")
		})
	}
	// The benchmark topology (test/scale, the package that benchmarks it
	// in full), at a tenth of its large size: 2,000 routes, 500 policies.
	b.Run("issue7/scale=0.1", func(b *testing.B) {
		objs := scale.Generate(scale.Options{Scale: 0.1, Seed: 1})
		b.ReportAllocs()
		b.ResetTimer()
		var n int
		for i := 0; i < b.N; i++ {
			out, err := ComputeAll(objs, Options{})
			if err != nil {
				b.Fatal(err)
			}
			n = len(out)
		}
		b.ReportMetric(float64(n), "keys")
	})
}

// BenchmarkIncrementalGatewayPolicyEdit: edit one gateway policy among
// thousands (after every key was computed once); Upsert, then Compute every
// returned key.
func BenchmarkIncrementalGatewayPolicyEdit(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			topo, pols := genTopology(sz.g)
			e, _ := NewEngine(Options{})
			for _, o := range append(append([]*unstructured.Unstructured{}, topo...), pols...) {
				e.Upsert(o)
			}
			var target *unstructured.Unstructured
			for _, p := range pols {
				if p.GetName() == "pol-9" { // p%8 == 1: a Gateway policy
					target = p.DeepCopy()
				}
			}
			// Steady state of a server: every key was computed once.
			for _, k := range e.Keys() {
				e.Compute(k)
			}
			b.ReportAllocs()
			b.ResetTimer()
			keys := 0
			for i := 0; i < b.N; i++ {
				_ = unstructured.SetNestedField(target.Object, int64(i), "spec", "attempts")
				ks := e.Upsert(target.DeepCopy())
				for _, k := range ks {
					e.Compute(k)
				}
				keys = len(ks)
			}
			b.ReportMetric(float64(keys), "keys/op")
		})
	}
}
