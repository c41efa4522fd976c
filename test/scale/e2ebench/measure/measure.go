// Package measure times the server through kube-apiserver's aggregator as
// clients and users see it: LISTs and GETs against kube-apiserver's own
// HTTPRoutes, the index of the listed EffectivePolicies the other steps pick
// their policies and routes from, PolicyReach, the user's kubectl commands,
// gwctl, and CPU profiles of the server under that load. It also holds the
// paths, logging and statistics the other measuring packages share.
package measure

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"k8s.io/client-go/rest"
)

// EPPath and RoutePath are the paths that list every EffectivePolicy and
// every HTTPRoute.
const (
	EPPath    = "/apis/effectivepolicy.dev/v1alpha1/effectivepolicies"
	RoutePath = "/apis/gateway.networking.k8s.io/v1/httproutes"
)

// Logf logs a step of the benchmark to standard error.
func Logf(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "e2ebench: "+format+"\n", args...)
}

// EPGetPath is the path of the EffectivePolicy namespace/name.
func EPGetPath(key string) string {
	ns, name, _ := strings.Cut(key, "/")
	return fmt.Sprintf("/apis/effectivepolicy.dev/v1alpha1/namespaces/%s/effectivepolicies/%s", ns, name)
}

// RouteGetPath is the path of the HTTPRoute namespace/name.
func RouteGetPath(key string) string {
	ns, name, _ := strings.Cut(key, "/")
	return fmt.Sprintf("/apis/gateway.networking.k8s.io/v1/namespaces/%s/httproutes/%s", ns, name)
}

// RouteNames lists the namespace/name of every HTTPRoute.
func RouteNames(ctx context.Context, rc rest.Interface) ([]string, error) {
	body, err := rc.Get().AbsPath(RoutePath).SetHeader("Accept", "application/json").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []struct {
			Metadata struct{ Namespace, Name string } `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(list.Items))
	for _, it := range list.Items {
		names = append(names, it.Metadata.Namespace+"/"+it.Metadata.Name)
	}
	sort.Strings(names)
	return names, nil
}

// Pct is the nearest-rank percentile of sorted values.
func Pct[T any](sorted []T, p float64) T {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// Median is the middle value of xs (the upper one of an even count), 0 for
// none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	c := append([]float64(nil), xs...)
	sort.Float64s(c)
	return c[len(c)/2]
}

// PercentileMs is the nearest-rank percentile.
func PercentileMs(xs []float64, p float64) float64 {
	c := append([]float64(nil), xs...)
	sort.Float64s(c)
	return Pct(c, p)
}
