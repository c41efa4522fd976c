package validation_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/validation"
)

func traceOf(host, path string, headers map[string]string) *v1alpha1.RequestTrace {
	return &v1alpha1.RequestTrace{Spec: v1alpha1.RequestTraceSpec{Request: v1alpha1.TracedRequest{Host: host, Path: path, Headers: headers}}}
}

func TestValidateRequestTrace(t *testing.T) {
	many := map[string]string{}
	for i := 0; i < 101; i++ {
		many[fmt.Sprintf("x-h%d", i)] = "v"
	}
	cases := []struct {
		name  string
		trace *v1alpha1.RequestTrace
		field string // "" = valid
	}{
		{"host and path", traceOf("baker.example.com", "/orders?x=1", nil), ""},
		{"host with port and dot", traceOf("Baker.Example.com.:8080", "/", nil), ""},
		{"IP host", traceOf("10.0.0.1", "", nil), ""},
		{"IPv6 host with port", traceOf("[::1]:80", "", nil), ""},
		{"TCP without host", &v1alpha1.RequestTrace{Spec: v1alpha1.RequestTraceSpec{Port: 5432, Request: v1alpha1.TracedRequest{Protocol: "tcp"}}}, ""},
		{"missing host", traceOf("", "/", nil), "spec.request.host"},
		{"wildcard host", traceOf("*.example.com", "/", nil), "spec.request.host"},
		{"host with a space", traceOf("a b", "/", nil), "spec.request.host"},
		{"host port not a number", traceOf("a.example.com:http", "/", nil), "spec.request.host"},
		{"path without slash", traceOf("a", "orders", nil), "spec.request.path"},
		{"path with a space", traceOf("a", "/a b", nil), "spec.request.path"},
		{"absurd path", traceOf("a", "/"+strings.Repeat("a", 9000), nil), "spec.request.path"},
		{"10,000 headers", traceOf("a", "/", func() map[string]string {
			m := map[string]string{}
			for i := 0; i < 10000; i++ {
				m[fmt.Sprintf("x-%d", i)] = "v"
			}
			return m
		}()), "spec.request.headers"},
		{"101 headers", traceOf("a", "/", many), "spec.request.headers"},
		{"header name with a space", traceOf("a", "/", map[string]string{"x y": "1"}), "spec.request.headers[x y]"},
		{"header value with a newline", traceOf("a", "/", map[string]string{"x": "1\r\nInjected: 2"}), "spec.request.headers[x]"},
		{"bad method", &v1alpha1.RequestTrace{Spec: v1alpha1.RequestTraceSpec{Request: v1alpha1.TracedRequest{Host: "a", Method: "GET /"}}}, "spec.request.method"},
		{"unknown protocol", &v1alpha1.RequestTrace{Spec: v1alpha1.RequestTraceSpec{Request: v1alpha1.TracedRequest{Host: "a", Protocol: "QUIC"}}}, "spec.request.protocol"},
		{"port out of range", &v1alpha1.RequestTrace{Spec: v1alpha1.RequestTraceSpec{Port: 70000, Request: v1alpha1.TracedRequest{Host: "a"}}}, "spec.port"},
		{"gateway without a name", &v1alpha1.RequestTrace{Spec: v1alpha1.RequestTraceSpec{Gateway: &v1alpha1.GatewayReference{Namespace: "infra"}, Request: v1alpha1.TracedRequest{Host: "a"}}}, "spec.gateway.name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := validation.ValidateRequestTrace(tc.trace)
			if tc.field == "" {
				if len(errs) > 0 {
					t.Fatalf("valid trace refused: %v", errs)
				}
				return
			}
			if len(errs) == 0 {
				t.Fatalf("want an error on %s, got none", tc.field)
			}
			if errs[0].Field != tc.field {
				t.Errorf("error on %s (%v), want %s", errs[0].Field, errs, tc.field)
			}
		})
	}
}
