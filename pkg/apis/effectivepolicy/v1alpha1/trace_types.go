package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// +genclient
// +genclient:nonNamespaced
// +genclient:onlyVerbs=create
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// RequestTrace asks what the Gateways do with one request (docs/spec.md §9): which
// listener takes it, which route and rule serve it, which backends receive
// it, and the effective policy of exactly that context. Like a
// SubjectAccessReview it is only created, never stored: the answer is the
// returned object's status.
type RequestTrace struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the request and where it comes in.
	Spec RequestTraceSpec `json:"spec"`
	// Status is the answer, filled in by the server.
	// +optional
	Status RequestTraceStatus `json:"status,omitempty"`
}

// RequestTraceSpec names the request and, optionally, the Gateway and port
// it arrives at.
type RequestTraceSpec struct {
	// Gateway limits the trace to one Gateway; unset traces every Gateway.
	// +optional
	Gateway *GatewayReference `json:"gateway,omitempty"`
	// Port limits the trace to the listeners on this port; 0 means every
	// port.
	// +optional
	Port int32 `json:"port,omitempty"`
	// Request is the request to trace.
	Request TracedRequest `json:"request"`
}

// GatewayReference names a Gateway.
type GatewayReference struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// TracedRequest is an HTTP request, a gRPC call, or a TLS, TCP or UDP
// connection, reduced to what Gateway API matching reads.
type TracedRequest struct {
	// Host is the Host header, the :authority of a gRPC call, or the SNI of
	// a TLS connection. A port suffix and a trailing dot are ignored, and
	// so is case.
	Host string `json:"host"`
	// Protocol limits the trace to listeners of this protocol (HTTP, HTTPS,
	// TLS, TCP or UDP); empty means any.
	// +optional
	Protocol string `json:"protocol,omitempty"`
	// Method is the HTTP method; empty means GET (POST for a gRPC call).
	// +optional
	Method string `json:"method,omitempty"`
	// Path is the request path, possibly with a query string; for a gRPC
	// call /package.Service/Method. Empty means "/".
	// +optional
	Path string `json:"path,omitempty"`
	// Headers are request headers by name (any case); gRPC metadata for a
	// gRPC call.
	// +optional
	Headers map[string]string `json:"headers,omitempty"`
	// QueryParams add to the query string of Path.
	// +optional
	QueryParams map[string]string `json:"queryParams,omitempty"`
	// GRPC marks a gRPC call: GRPCRoutes are matched by the service and
	// method in Path. A content-type header of application/grpc does too.
	// +optional
	GRPC bool `json:"grpc,omitempty"`
}

// RequestTraceStatus is the answer to a RequestTrace.
type RequestTraceStatus struct {
	// Matches holds one entry per Gateway and port whose listener takes
	// the request, sorted by Gateway namespace, name and port. An entry
	// whose request went no further than its listener says why in reason
	// and message.
	// +optional
	// +listType=atomic
	Matches []TraceMatch `json:"matches,omitempty"`
	// HiddenMatches counts the Gateways that take the request in namespaces
	// where the caller may not get effectivepolicies: they are not named.
	// +optional
	HiddenMatches int32 `json:"hiddenMatches,omitempty"`
	// Message says why nothing matched when no Gateway serves the request.
	// +optional
	Message string `json:"message,omitempty"`
}

// TraceMatch is what one listener of one Gateway does with the request.
type TraceMatch struct {
	// Gateway is the Gateway (group, kind, namespace, name).
	Gateway ObjectReference `json:"gateway"`
	// Listener is the name of the listener chosen by port and hostname;
	// empty when no listener of the Gateway takes the request.
	// +optional
	Listener string `json:"listener,omitempty"`
	// ListenerSet is the ListenerSet that declares the listener, when not
	// the Gateway itself.
	// +optional
	ListenerSet *ObjectReference `json:"listenerSet,omitempty"`
	// Port and Protocol are the listener's.
	// +optional
	Port int32 `json:"port,omitempty"`
	// +optional
	Protocol string `json:"protocol,omitempty"`
	// HostnameMatching is how routes are chosen among hostnames:
	// MostSpecificHost when the Gateway's implementation binds the request
	// to the most specific route hostname and answers 404 when its rules do
	// not match (Envoy Gateway, Istio, NGINX Gateway Fabric); Precedence
	// when one precedence order runs over the rules of every route that
	// serves the host (the Gateway API specification's wording).
	// +optional
	HostnameMatching string `json:"hostnameMatching,omitempty"`
	// Route is the route chosen, when one was.
	// +optional
	Route *ObjectReference `json:"route,omitempty"`
	// Rule is the rule of Route chosen by Gateway API match precedence.
	// +optional
	Rule *TraceRule `json:"rule,omitempty"`
	// Backends are the rule's backendRefs with the API's defaults filled
	// in.
	// +optional
	// +listType=atomic
	Backends []TraceBackend `json:"backends,omitempty"`
	// HiddenBackends counts the backends in namespaces where the caller may
	// not get effectivepolicies.
	// +optional
	HiddenBackends int32 `json:"hiddenBackends,omitempty"`
	// Policies holds, per policy kind, the effective entry of the chosen
	// rule in this very context (this Gateway, listener, route and rule).
	// +optional
	// +listType=atomic
	Policies []TracePolicy `json:"policies,omitempty"`
	// BackendPolicies holds the same for each backend, in this context;
	// each entry names its backend.
	// +optional
	// +listType=atomic
	BackendPolicies []TracePolicy `json:"backendPolicies,omitempty"`
	// Reason is Matched, or says how far the request got: NoListeners,
	// NoListenerOnPort, NoListenerForHost, NoRoutes, NoRouteForHost,
	// NoRuleMatches, Hidden.
	Reason string `json:"reason"`
	// Message says why in words when Reason is not Matched, and notes what
	// a match leaves open (a rule without backends, a backend the route
	// may not reference).
	// +optional
	Message string `json:"message,omitempty"`
}

// TraceRule names the rule of a route.
type TraceRule struct {
	// Index is the rule's index in spec.rules.
	Index int32 `json:"index"`
	// Name is the rule's name, when it has one.
	// +optional
	Name string `json:"name,omitempty"`
	// MatchIndex is the index of the rule's match that won, -1 when the
	// rule has no matches (they default to every request).
	MatchIndex int32 `json:"matchIndex"`
}

// TraceBackend is one backendRef of the chosen rule.
type TraceBackend struct {
	// Ref is the backend (group, kind, namespace, name).
	Ref ObjectReference `json:"ref"`
	// Port is the backendRef's port, when set.
	// +optional
	Port *int32 `json:"port,omitempty"`
	// Weight is the backendRef's weight (1 when unset).
	Weight int32 `json:"weight"`
	// Message says why the request cannot reach the backend: a
	// cross-namespace reference that no ReferenceGrant allows.
	// +optional
	Message string `json:"message,omitempty"`
}

// TracePolicy is the effective entry of one policy kind in one context.
type TracePolicy struct {
	// Backend names the backend this entry is for (backendPolicies only).
	// +optional
	Backend *ObjectReference `json:"backend,omitempty"`
	// Group and Kind of the policy kind.
	Group string `json:"group"`
	Kind  string `json:"kind"`
	// Class is Direct or Inherited.
	Class PolicyClass `json:"class"`
	// Semantics names the rules this entry was computed with, as in the
	// EffectivePolicy: Assumed when no descriptor or profile describes the
	// kind.
	// +optional
	Semantics string `json:"semantics,omitempty"`
	// Via lists the attachment points merged in this context, least
	// specific first.
	// +listType=atomic
	Via []ObjectReference `json:"via"`
	// SectionName is set when the entry is a section's (a named rule, a
	// Service port).
	// +optional
	SectionName string `json:"sectionName,omitempty"`
	// Spec is the merged spec.
	Spec runtime.RawExtension `json:"spec"`
	// FieldSources names, per leaf of Spec, the policy whose value survived.
	// +optional
	FieldSources map[string]string `json:"fieldSources,omitempty"`
	// Sources are the target's sources of this kind attached on this
	// context's path, with their outcomes over all of the target's contexts
	// (as in the EffectivePolicy).
	// +optional
	// +listType=atomic
	Sources []PolicySource `json:"sources,omitempty"`
}
