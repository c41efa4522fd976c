package live

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// BenchmarkStartUp measures the time from Run to ready (informer sync and
// the first full computation, with the real engine and the bbolt cache) for
// a cluster of n namespaces, each with a Gateway, three HTTPRoutes, three
// Services and a ColorPolicy on the Gateway.
func BenchmarkStartUp(b *testing.B) {
	for _, n := range []int{100, 400} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var objs []*unstructured.Unstructured
			objs = append(objs, gatewayCRDs...)
			objs = append(objs, crdWithLabel("colors.example.com", "ColorPolicy", "colorpolicies"))
			objs = append(objs, mustParse(b, `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass","metadata":{"name":"gc"},"spec":{"controllerName":"x/y"}}`))
			for i := 0; i < n; i++ {
				ns := fmt.Sprintf("ns%d", i)
				objs = append(objs,
					mustParse(b, fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, ns)),
					mustParse(b, fmt.Sprintf(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{"name":"gw","namespace":%q},"spec":{"gatewayClassName":"gc","listeners":[{"name":"http","port":80,"protocol":"HTTP"}]}}`, ns)),
					mustParse(b, fmt.Sprintf(`{"apiVersion":"colors.example.com/v1","kind":"ColorPolicy","metadata":{"name":"p","namespace":%q},"spec":{"targetRefs":[{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"gw"}],"color":"red"}}`, ns)))
				for j := 0; j < 3; j++ {
					objs = append(objs,
						mustParse(b, fmt.Sprintf(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"svc%d","namespace":%q},"spec":{"ports":[{"name":"http","port":80}]}}`, j, ns)),
						mustParse(b, fmt.Sprintf(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"r%d","namespace":%q},"spec":{"parentRefs":[{"name":"gw"}],"rules":[{"backendRefs":[{"name":"svc%d","port":80}]}]}}`, j, ns, j)))
				}
			}
			var outputs int
			for i := 0; i < b.N; i++ {
				client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), scenarioListKinds())
				for _, o := range objs {
					gvr := o.GroupVersionKind().GroupVersion().WithResource(plurals[o.GetKind()])
					if err := client.Tracker().Create(gvr, noisy(o), o.GetNamespace()); err != nil {
						b.Fatal(err)
					}
				}
				o := NewOptions()
				o.CacheDir = b.TempDir()
				l, err := o.NewForClient(client)
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { defer close(done); _ = l.Run(ctx) }()
				for !l.Ready() {
					time.Sleep(time.Millisecond)
				}
				objs, _, _ := l.EffectivePolicies().List(ctx, "")
				outputs = len(objs)
				cancel()
				<-done
			}
			b.ReportMetric(float64(outputs), "outputs")
		})
	}
}

func crdWithLabel(group, kind, plural string) *unstructured.Unstructured {
	return crd(group, kind, plural, true)
}

func mustParse(b *testing.B, s string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(s)); err != nil {
		b.Fatal(err)
	}
	return u
}
