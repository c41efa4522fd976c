package validation

import (
	"fmt"
	"net"
	"strings"

	"golang.org/x/net/http/httpguts"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// Bounds of a RequestTrace's request. A real request that exceeds them is
// refused by the Gateways too (Envoy's default is at most 100 headers in
// 60 KiB; NGINX's large_client_header_buffers 4 × 8 KiB): a trace of one
// would say nothing true. The largest valid trace (about 0.9 MB) fits the
// server's body limit (1 MiB).
const (
	maxPathBytes        = 8192
	maxHeaders          = 100
	maxQueryParams      = 100
	maxNameBytes        = 256
	maxValueBytes       = 4096
	maxMethodBytes      = 32
	maxHostPortSuffixes = 6 // ":65535"
)

var traceProtocols = []string{"HTTP", "HTTPS", "TLS", "TCP", "UDP"}

// ValidateRequestTrace checks a RequestTrace's spec: what the server cannot
// trace gets a 422 naming the field, never a partial answer.
func ValidateRequestTrace(rt *v1alpha1.RequestTrace) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if g := rt.Spec.Gateway; g != nil {
		p := spec.Child("gateway")
		for _, msg := range validation.IsDNS1123Label(g.Namespace) {
			errs = append(errs, field.Invalid(p.Child("namespace"), g.Namespace, msg))
		}
		for _, msg := range validation.IsDNS1123Subdomain(g.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), g.Name, msg))
		}
	}
	if rt.Spec.Port < 0 || rt.Spec.Port > 65535 {
		errs = append(errs, field.Invalid(spec.Child("port"), rt.Spec.Port, "must be between 1 and 65535, or 0 for every port"))
	}
	return append(errs, validateRequest(&rt.Spec.Request, spec.Child("request"))...)
}

func validateRequest(r *v1alpha1.TracedRequest, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	proto := strings.ToUpper(r.Protocol)
	if r.Protocol != "" && !contains(traceProtocols, proto) {
		errs = append(errs, field.NotSupported(p.Child("protocol"), r.Protocol, traceProtocols))
	}
	l4 := proto == "TCP" || proto == "UDP"
	switch {
	case r.Host == "" && !l4:
		errs = append(errs, field.Required(p.Child("host"), "the Host header (or SNI) the request carries; only TCP and UDP requests go without"))
	case r.Host != "":
		if msg := hostError(r.Host); msg != "" {
			errs = append(errs, field.Invalid(p.Child("host"), r.Host, msg))
		}
	}
	if len(r.Method) > maxMethodBytes || r.Method != "" && !httpguts.ValidHeaderFieldName(r.Method) {
		errs = append(errs, field.Invalid(p.Child("method"), r.Method, fmt.Sprintf("must be an HTTP method token of at most %d characters", maxMethodBytes)))
	}
	switch {
	case len(r.Path) > maxPathBytes:
		errs = append(errs, field.TooLong(p.Child("path"), "", maxPathBytes))
	case r.Path != "" && !strings.HasPrefix(r.Path, "/"):
		errs = append(errs, field.Invalid(p.Child("path"), r.Path, `must start with "/"`))
	case strings.IndexFunc(r.Path, func(c rune) bool { return c <= ' ' || c == 0x7f }) >= 0:
		errs = append(errs, field.Invalid(p.Child("path"), r.Path, "must not contain spaces or control characters (escape them: %20)"))
	}
	errs = append(errs, validateHeaders(r.Headers, p.Child("headers"))...)
	return append(errs, validateQueryParams(r.QueryParams, p.Child("queryParams"))...)
}

func validateHeaders(headers map[string]string, p *field.Path) field.ErrorList {
	if len(headers) > maxHeaders {
		return field.ErrorList{field.TooMany(p, len(headers), maxHeaders)}
	}
	var errs field.ErrorList
	for name, value := range headers {
		hp := p.Key(name)
		if len(name) > maxNameBytes || !httpguts.ValidHeaderFieldName(name) {
			errs = append(errs, field.Invalid(hp, name, fmt.Sprintf("must be an HTTP header name of at most %d characters", maxNameBytes)))
		}
		if len(value) > maxValueBytes || !httpguts.ValidHeaderFieldValue(value) {
			errs = append(errs, field.Invalid(hp, "", fmt.Sprintf("must be an HTTP header value of at most %d bytes, without control characters", maxValueBytes)))
		}
	}
	return errs
}

func validateQueryParams(params map[string]string, p *field.Path) field.ErrorList {
	if len(params) > maxQueryParams {
		return field.ErrorList{field.TooMany(p, len(params), maxQueryParams)}
	}
	var errs field.ErrorList
	for name, value := range params {
		if name == "" || len(name) > maxNameBytes || len(value) > maxValueBytes {
			errs = append(errs, field.Invalid(p.Key(name), "", fmt.Sprintf("names of 1 to %d bytes, values of at most %d", maxNameBytes, maxValueBytes)))
		}
	}
	return errs
}

// hostError says what is wrong with a request host: a DNS name or an IP
// address, with an optional port and trailing dot; not a wildcard (a
// request names one host).
func hostError(host string) string {
	h := host
	if len(h) > validation.DNS1123SubdomainMaxLength+maxHostPortSuffixes+1 {
		return "too long for a host name"
	}
	if hh, port, err := net.SplitHostPort(h); err == nil {
		if port == "" || strings.Trim(port, "0123456789") != "" {
			return "the port suffix must be a number"
		}
		h = hh
	}
	h = strings.TrimSuffix(h, ".")
	if net.ParseIP(h) != nil {
		return ""
	}
	if strings.Contains(h, "*") {
		return "a request names one host: wildcards are for listeners and routes"
	}
	if msgs := validation.IsDNS1123Subdomain(strings.ToLower(h)); len(msgs) > 0 {
		return strings.Join(msgs, "; ")
	}
	return ""
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
