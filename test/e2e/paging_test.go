//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/pagedlist"
	epclient "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned/typed/effectivepolicy/v1alpha1"
)

// A paged list (limit/continue) returns every object once, in order, consistent at the first
// page's resourceVersion, through kube-apiserver's aggregator: with the generated clientset page
// by page, and with kubectl, which asks for chunks by itself (--chunk-size).
func TestPagedList(t *testing.T) {
	const ns, n = "e2e-paging", 7
	faultFixture(t, ns, n, "teal")
	waitColors(t, ns, n, "teal")
	ctx := context.Background()
	eps := clientset(t, "").EffectivepolicyV1alpha1().EffectivePolicies(ns)

	full, err := eps.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, ep := range full.Items {
		want = append(want, ep.Name)
	}
	for _, limit := range []int64{1, 3, n, n + 5} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			var got []string
			opts := metav1.ListOptions{Limit: limit}
			rv := ""
			for page := 0; ; page++ {
				l, err := eps.List(ctx, opts)
				if err != nil {
					t.Fatalf("page %d: %v", page, err)
				}
				if int64(len(l.Items)) > limit {
					t.Fatalf("page %d: %d items, limit %d", page, len(l.Items), limit)
				}
				if rv == "" {
					rv = l.ResourceVersion
				} else if l.ResourceVersion != rv {
					t.Errorf("page %d at resourceVersion %s, the first at %s", page, l.ResourceVersion, rv)
				}
				for _, ep := range l.Items {
					got = append(got, ep.Name)
					// The first page's state, even after the color changed.
					if spec := string(ep.Targets[0].Policies[0].Effective[0].Spec.Raw); spec != `{"color":"teal"}` {
						t.Errorf("page %d: %s has %s, not the first page's state", page, ep.Name, spec)
					}
				}
				if l.Continue == "" {
					break
				}
				if page > n {
					t.Fatal("paging does not end")
				}
				if page == 0 {
					setColor(t, ns, n, "plum") // not seen by the pages that follow
				}
				opts = metav1.ListOptions{Limit: limit, Continue: l.Continue}
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("paged %v, want %v", got, want)
			}
			setColor(t, ns, n, "teal")
			waitColors(t, ns, n, "teal")
		})
	}

	chunked := kubectl(t, "get", "effectivepolicies", "-n", ns, "--chunk-size=2", "-o", "name")
	whole := kubectl(t, "get", "effectivepolicies", "-n", ns, "--chunk-size=0", "-o", "name")
	if chunked != whole || strings.Count(whole, "\n") != n {
		t.Errorf("kubectl in chunks of 2:\n%s\nin one:\n%s", chunked, whole)
	}

	pluginListAsOne(ctx, t, eps, ns, n)
}

// pluginListAsOne: the plugin's online list (pkg/cli/pagedlist: pages
// decoded while the next is fetched) gives, in pages of 2, what one List
// of the n EffectivePolicies of ns gives.
func pluginListAsOne(ctx context.Context, t *testing.T, eps epclient.EffectivePolicyInterface, ns string, n int) {
	t.Helper()
	one, err := eps.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	paged, err := pagedlist.List(ctx, pagedlist.Request{
		Client: clientset(t, "").EffectivepolicyV1alpha1().RESTClient(), Namespace: ns, Resource: "effectivepolicies",
		NewList: func() runtime.Object { return &v1alpha1.EffectivePolicyList{} }, PageSize: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	pl := paged.(*v1alpha1.EffectivePolicyList)
	if len(pl.Items) != n || !reflect.DeepEqual(pl.Items, one.Items) || pl.ResourceVersion == "" || pl.Continue != "" {
		t.Errorf("pagedlist in pages of 2: %d items at resourceVersion %q (continue %q), not the %d of one List", len(pl.Items), pl.ResourceVersion, pl.Continue, len(one.Items))
	}
}
