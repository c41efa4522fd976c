package registry_test

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// FuzzRequestTrace: no request crashes a trace (docs/spec.md §6). Whatever the
// host, path, method, header, port and protocol, Create answers either a
// 422 (bad input) or a status whose matches are well formed; never a panic,
// never another error.
func FuzzRequestTrace(f *testing.F) {
	f.Add("baker.example.com", "/", "GET", "x-env", "canary", int32(80), "", "")
	f.Add("baker.example.com:80", "/a?b=c#d", "POST", "content-type", "application/grpc", int32(0), "HTTP", "gw")
	f.Add("*.example.com", "", "", "", "", int32(-1), "QUIC", "nope")
	f.Add("[::1]:x", "/%zz", "G ET", "a b", "\r\n", int32(70000), "tcp", "")
	r, _ := traceServer(f, nil)
	f.Fuzz(func(t *testing.T, host, path, method, hname, hvalue string, port int32, protocol, gateway string) {
		spec := v1alpha1.RequestTraceSpec{Port: port, Request: v1alpha1.TracedRequest{
			Host: host, Path: path, Method: method, Protocol: protocol, Headers: map[string]string{hname: hvalue},
		}}
		if gateway != "" {
			spec.Gateway = &v1alpha1.GatewayReference{Namespace: "infra", Name: gateway}
		}
		out, err := r.Create(userCtx("fuzz"), &v1alpha1.RequestTrace{Spec: spec}, nil, &metav1.CreateOptions{})
		if err != nil {
			if !apierrors.IsInvalid(err) {
				t.Fatalf("%+v: want a 422 or an answer, got %v", spec, err)
			}
			return
		}
		for _, m := range out.(*v1alpha1.RequestTrace).Status.Matches {
			if m.Reason == "Matched" && (m.Route == nil || m.Rule == nil) {
				t.Fatalf("%+v: a match without route or rule: %+v", spec, m)
			}
			if m.Reason != "Matched" && (m.Route != nil || len(m.Policies) > 0) && m.Reason != "RouteHidden" {
				t.Fatalf("%+v: no match, yet a route: %+v", spec, m)
			}
		}
	})
}
